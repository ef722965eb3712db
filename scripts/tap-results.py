#!/usr/bin/env python3
"""Split a guest console log into per-test TAP and count the cases.

    tap-results.py CONSOLE_LOG LIST [--counts FILE] [--config .config]
                   [--boot-log FILE]

CONSOLE_LOG holds "# selftest: NAME ARGS" / "# selftest-exit: NAME RC" marker
lines written by selftests/guest-run.sh around each test's output; a
"guest-write FILE VALUE" line of LIST is a setting, not a test, and a
"# guest-write failed:" line in the log (the guest could not write it) is a
failure. Every
top-level TAP result is one case. A case marked "# SKIP" counts as skipped,
and also as failed unless an "allow-skip GLOB REASON" line of LIST matches
"NAME: description", or an "allow-skip-without CONFIG_OPTION GLOB REASON"
line does while OPTION is not =y in the --config .config (a skip the kernel
cannot avoid, such as soft-dirty on arm64; a test whose whole skip it
allows is not built or run at all, and counts as that one skip), or an
"allow-skip-with CONFIG_OPTION GLOB REASON" line while OPTION is =y. A test
that skips as a whole ("1..0 # SKIP", or exit
status 4 with no result) is one skipped case "NAME: whole test", under the
same rule. A test that does not finish, prints no TAP, exits non-zero with
no failed case, or gives fewer results than its plan adds a failure. A
kernel splat anywhere in the log is a failure too. With --config, each
"kunit OPTION SUITE" line of LIST whose OPTION is =y in that .config needs
the suite's KTAP ("# Subtest: SUITE") in the boot log (--boot-log, else
CONSOLE_LOG): one passed case if it is there, a failure if not.
Prints one line per case and a summary; exits 1 on any failure.
"""
import fnmatch
import re
import sys

RESULT = re.compile(r'^(not ok|ok)\s+(\d+)\s*(?:-\s*)?(.*?)\s*(?:#\s*(SKIP|skip|TODO)\b\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)\s*(?:#\s*(?:SKIP|skip)\b\s*(.*))?$')
SPLAT = re.compile(r'(BUG: |WARNING: |Oops: |general protection fault|Kernel panic|'
                   r'possible circular locking|possible recursive locking|'
                   r'inconsistent lock state|UBSAN:|KASAN:|BUG kmalloc|'
                   r'soft lockup|hung_task|rcu_sched self-detected stall|'
                   r'RCU detected stall|page dumped because)')


def main():
    args = sys.argv[1:]
    # -h/--help: the docstring above; an option it does not take: one error line.
    if '-h' in args or '--help' in args:
        print(__doc__.strip())
        sys.exit(0)
    opts = {}
    for o in ('--counts', '--config', '--boot-log'):
        if o in args:
            i = args.index(o)
            if i + 1 >= len(args):
                sys.exit(f'{o} needs a file')
            opts[o] = args[i + 1]
            del args[i:i + 2]
    bad = [a for a in args if a.startswith('-')]
    if bad:
        sys.exit(f"tap-results.py: error: unknown option '{bad[0]}' (see --help)")
    counts_file = opts.get('--counts')
    if len(args) != 2:
        sys.exit(__doc__)
    log, listfile = args
    allow = []
    without = []
    with_ = []
    expected = []
    suites = []
    for line in open(listfile, encoding='utf-8'):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        if line.startswith('kunit '):
            parts = line.split()
            if len(parts) != 3:
                sys.exit(f'{listfile}: kunit needs an option and a suite: {line}')
            suites.append((parts[1], parts[2]))
            continue
        if line.split()[0] == 'guest-write':
            if len(line.split()) != 3:
                sys.exit(f'{listfile}: guest-write needs a file and a value: {line}')
            continue
        if line.split()[0] in ('allow-skip-without', 'allow-skip-with'):
            parts = line.split(None, 3)
            if len(parts) < 4 or not parts[1].startswith('CONFIG_'):
                sys.exit(f'{listfile}: {parts[0]} needs an option, a glob and a reason: {line}')
            (without if parts[0] == 'allow-skip-without' else with_).append(parts[1:])
            continue
        if line.startswith('allow-skip'):
            parts = line.split(None, 2)
            if len(parts) < 3:
                sys.exit(f'{listfile}: allow-skip needs a glob and a reason: {line}')
            allow.append((parts[1], parts[2]))
        else:
            expected.append(line.split()[0])

    if without or with_:
        if '--config' not in opts:
            sys.exit(f'{listfile}: allow-skip-without and allow-skip-with need --config')
        config = set(open(opts['--config'], encoding='utf-8').read().split())
        without = [(g, f'{r} ({o} is not set)') for o, g, r in without if f'{o}=y' not in config]
        allow += without + [(g, f'{r} ({o}=y)') for o, g, r in with_ if f'{o}=y' in config]

    passed = failed = skipped = 0
    out = []

    def allowed(desc, reason):
        # A case with no description ("ok 19 # SKIP move-mthp on anon")
        # is "case N": its glob may go on with ": " and the reason.
        return [r for g, r in allow
                if fnmatch.fnmatch(desc, g) or fnmatch.fnmatch(f'{desc}: {reason}', g)]

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
        if raw.startswith('# guest-write failed: '):
            case('FAIL', 'guest-write', raw[len('# guest-write failed: '):])
            continue
        m = re.match(r'^# selftest: (\S+)', raw)
        if m:
            current = m.group(1)
            seen.append(current)
            state[current] = {'plan': None, 'results': 0, 'failed': 0, 'exit': None,
                              'skip_all': None}
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
            if st['plan'] == 0:
                st['skip_all'] = m.group(2) or 'no reason given'
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
            ok = allowed(desc, reason)
            if ok:
                case('SKIP', desc, f'{reason}; allowed: {ok[0]}')
            else:
                case('SKIP', desc, reason)
                case('FAIL', desc, 'skipped, and the list does not allow it')
        else:
            case('PASS', desc)

    for name in expected:
        if name not in state:
            # scripts/selftests neither builds nor runs a test whose whole
            # skip an allow-skip-without line allows for this kernel.
            ok = [r for g, r in without if fnmatch.fnmatch(f'{name}: whole test', g)]
            if ok:
                case('SKIP', f'{name}: whole test', f'not built or run; allowed: {ok[0]}')
            else:
                case('FAIL', name, 'never started in the guest')
            continue
        st = state[name]
        if st['exit'] is None:
            case('FAIL', name, 'did not finish (crash, hang or guest died)')
            continue
        if st['results'] == 0:
            if st['skip_all'] is not None or st['exit'] == 4:
                # The whole test skipped ("1..0 # SKIP", exit 4): one
                # skip, which the list must allow like any other.
                desc = f'{name}: whole test'
                reason = st['skip_all'] or 'exit status 4 (skip) with no result'
                ok = allowed(desc, reason)
                case('SKIP', desc, reason + (f'; allowed: {ok[0]}' if ok else ''))
                if not ok:
                    case('FAIL', desc, 'skipped, and the list does not allow it')
            elif st['plan'] is None:
                case('FAIL', name, f'printed no TAP (exit status {st["exit"]})')
            else:
                case('FAIL', name, 'reported no test case')
            continue
        if st['exit'] not in (0, 4) and st['failed'] == 0:
            case('FAIL', name, f'exit status {st["exit"]} with no failed case')
        if st['plan'] is not None and st['results'] < st['plan']:
            case('FAIL', name, f'{st["results"]} results for a plan of {st["plan"]}')
    # A KUnit suite the kernel was built with must have run at boot.
    if suites and '--config' in opts:
        config = set(open(opts['--config'], encoding='utf-8').read().split())
        boot = open(opts.get('--boot-log', log), encoding='utf-8', errors='replace').read()
        for opt, suite in suites:
            if f'{opt}=y' not in config:
                continue
            if re.search(rf'^\s*# Subtest: {re.escape(suite)}\s*$', boot, re.M):
                case('PASS', f'kunit: {suite} ran at boot')
            else:
                case('FAIL', f'kunit: {suite}', f'{opt}=y but no KTAP of the suite in the boot log')
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
