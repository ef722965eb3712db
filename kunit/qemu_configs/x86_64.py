# kunit.py --qemu_config for the copy_mc suite on x86_64: the default x86_64
# target with room for the 2 MB folios the suite copies, and -cpu max, whose
# ERMS the real-fault case of folio_mc_copy() needs (it skips without).
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0',
			   extra_qemu_params=['-m', '1024', '-smp', '2', '-cpu', 'max'])
