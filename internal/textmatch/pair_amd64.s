//go:build !purego

#include "textflag.h"

// func pairAVX2(h []byte, off1, off2 int, b1, b2, m1, m2 byte) int
//
// Returns the first i with h[i+off1]|m1 == b1 and h[i+off2]|m2 == b2
// among the positions whose 32-byte blocks lie within h, or -1-n when
// none of the n positions looked at has them. A mask of 0x20 with a
// lower-case letter finds the letter in either case; 0 finds the byte.
TEXT ·pairAVX2(SB), NOSPLIT, $0-56
	MOVQ h_base+0(FP), SI
	MOVQ h_len+8(FP), CX
	MOVQ off1+24(FP), R8
	MOVQ off2+32(FP), R9
	MOVBLZX b1+40(FP), AX
	MOVQ AX, X1
	VPBROADCASTB X1, Y1
	MOVBLZX b2+41(FP), AX
	MOVQ AX, X2
	VPBROADCASTB X2, Y2
	MOVBLZX m1+42(FP), AX
	MOVQ AX, X5
	VPBROADCASTB X5, Y5
	MOVBLZX m2+43(FP), AX
	MOVQ AX, X6
	VPBROADCASTB X6, Y6
	MOVQ R8, R10
	CMPQ R9, R10
	CMOVQGT R9, R10     // the larger offset
	MOVQ CX, R11
	SUBQ R10, R11
	SUBQ $32, R11       // the last position a block may start at
	LEAQ (SI)(R8*1), R8
	LEAQ (SI)(R9*1), R9
	XORQ DI, DI

loop:
	CMPQ DI, R11
	JGT none
	VMOVDQU (R8)(DI*1), Y3
	VPOR Y5, Y3, Y3
	VPCMPEQB Y3, Y1, Y3
	VMOVDQU (R9)(DI*1), Y4
	VPOR Y6, Y4, Y4
	VPCMPEQB Y4, Y2, Y4
	VPAND Y3, Y4, Y3
	VPMOVMSKB Y3, AX
	TESTL AX, AX
	JNZ found
	ADDQ $32, DI
	JMP loop

found:
	BSFL AX, AX
	ADDQ DI, AX
	VZEROUPPER
	MOVQ AX, ret+48(FP)
	RET

none:
	VZEROUPPER
	NOTQ DI             // -1-n
	MOVQ DI, ret+48(FP)
	RET
