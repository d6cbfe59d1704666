/* SPDX-License-Identifier: GPL-2.0 */
/* 16MB of arm64 RET instructions in the executable's text segment. */
	.section .text.bigtext, "ax"
	.balign 65536
	.globl bigtext
bigtext:
	.fill 4194304, 4, 0xd65f03c0
	.globl bigtext_end
bigtext_end:
	.section .note.GNU-stack, "", %progbits
