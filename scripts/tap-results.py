#!/usr/bin/env python3
"""Split a guest console log into per-test TAP and count the cases.

    tap-results.py CONSOLE_LOG LIST [--counts FILE]

CONSOLE_LOG holds "# selftest: NAME ARGS" / "# selftest-exit: NAME RC" marker
lines written by selftests/guest-run.sh around each test's output. Every
top-level TAP result is one case. A case marked "# SKIP" counts as skipped,
and also as failed unless an "allow-skip GLOB REASON" line of LIST matches
"NAME: description". A test that does not finish, exits non-zero with no
failed case, or gives fewer results than its plan adds a failure. A kernel
splat anywhere in the log is a failure too.
Prints one line per case and a summary; exits 1 on any failure.
"""
import fnmatch
import re
import sys

RESULT = re.compile(r'^(not ok|ok)\s+(\d+)\s*(?:-\s*)?(.*?)\s*(?:#\s*(SKIP|skip|TODO)\b\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)')
SPLAT = re.compile(r'(BUG: |WARNING: |Oops: |general protection fault|Kernel panic|'
                   r'possible circular locking|possible recursive locking|'
                   r'inconsistent lock state|UBSAN:|KASAN:|BUG kmalloc|'
                   r'soft lockup|hung_task|rcu_sched self-detected stall|'
                   r'RCU detected stall|page dumped because)')


def main():
    args = sys.argv[1:]
    counts_file = None
    if '--counts' in args:
        i = args.index('--counts')
        counts_file = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    log, listfile = args
    allow = []
    expected = []
    for line in open(listfile, encoding='utf-8'):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        if line.startswith('allow-skip'):
            parts = line.split(None, 2)
            if len(parts) < 3:
                sys.exit(f'{listfile}: allow-skip needs a glob and a reason: {line}')
            allow.append((parts[1], parts[2]))
        else:
            expected.append(line.split()[0])

    passed = failed = skipped = 0
    out = []

    def case(status, name, why=''):
        nonlocal passed, failed, skipped
        if status == 'PASS':
            passed += 1
        elif status == 'SKIP':
            skipped += 1
        else:
            failed += 1
        out.append(f'{status:5} {name}' + (f'  ({why})' if why else ''))

    current = None
    seen = []
    state = {}
    splats = []
    lines = open(log, encoding='utf-8', errors='replace').read().replace('\r', '').splitlines()
    for raw in lines:
        if SPLAT.search(raw):
            splats.append(raw.strip())
        m = re.match(r'^# selftest: (\S+)', raw)
        if m:
            current = m.group(1)
            seen.append(current)
            state[current] = {'plan': None, 'results': 0, 'failed': 0, 'exit': None}
            continue
        m = re.match(r'^# selftest-exit: (\S+) (\d+)', raw)
        if m and current:
            state[current]['exit'] = int(m.group(2))
            current = None
            continue
        if current is None:
            continue
        st = state[current]
        m = PLAN.match(raw)
        if m and st['plan'] is None:
            st['plan'] = int(m.group(1))
            continue
        m = RESULT.match(raw)
        if not m:
            continue
        st['results'] += 1
        desc = f'{current}: {m.group(3) or "case " + m.group(2)}'
        directive = (m.group(4) or '').upper()
        if m.group(1) == 'not ok' and directive != 'SKIP':
            st['failed'] += 1
            case('FAIL', desc)
        elif directive == 'SKIP':
            reason = m.group(5) or 'no reason given'
            ok = [r for g, r in allow if fnmatch.fnmatch(desc, g)]
            if ok:
                case('SKIP', desc, f'{reason}; allowed: {ok[0]}')
            else:
                case('SKIP', desc, reason)
                case('FAIL', desc, 'skipped, and the list does not allow it')
        else:
            case('PASS', desc)

    for name in expected:
        if name not in state:
            case('FAIL', name, 'never started in the guest')
            continue
        st = state[name]
        if st['exit'] is None:
            case('FAIL', name, 'did not finish (crash, hang or guest died)')
        elif st['exit'] not in (0, 4) and st['failed'] == 0:
            case('FAIL', name, f'exit status {st["exit"]} with no failed case')
        if st['plan'] is not None and st['results'] < st['plan']:
            case('FAIL', name, f'{st["results"]} results for a plan of {st["plan"]}')
        if st['results'] == 0 and st['exit'] == 0:
            case('FAIL', name, 'reported no test case')
    for s in splats[:5]:
        case('FAIL', 'kernel log', s[:160])

    print('\n'.join(out))
    print(f'selftests: {passed} passed, {failed} failed, {skipped} skipped')
    if counts_file:
        with open(counts_file, 'w', encoding='utf-8') as f:
            f.write(f'{passed} {failed} {skipped}\n')
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
