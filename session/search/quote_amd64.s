//go:build !purego

#include "textflag.h"

// func quoteAVX2(b []byte) int
//
// Returns the index of the first '"' in the whole 32-byte blocks of b
// that is not right after exactly one backslash (the byte before b[0]
// counts as no backslash), or the length of those blocks when there is
// none.
TEXT ·quoteAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	ANDQ $~31, CX           // whole blocks only
	MOVL $0x22, AX
	MOVQ AX, X1
	VPBROADCASTB X1, Y1     // '"'
	MOVL $0x5c, AX
	MOVQ AX, X2
	VPBROADCASTB X2, Y2     // '\\'
	XORQ DI, DI             // offset of the block
	XORL R8, R8             // backslash mask of the previous block

loop:
	CMPQ DI, CX
	JGE none
	VMOVDQU (SI)(DI*1), Y0
	VPCMPEQB Y0, Y1, Y3
	VPMOVMSKB Y3, AX        // quotes
	VPCMPEQB Y0, Y2, Y4
	VPMOVMSKB Y4, BX        // backslashes
	TESTL AX, AX
	JZ next
	// one = backslash right before; two = backslash two before
	MOVL BX, R9
	SHLL $1, R9
	MOVL R8, R10
	SHRL $31, R10
	ORL R10, R9
	MOVL BX, R11
	SHLL $2, R11
	MOVL R8, R10
	SHRL $30, R10
	ORL R10, R11
	// escaped for sure: exactly one backslash before
	NOTL R11
	ANDL R11, R9
	NOTL R9
	ANDL R9, AX
	JNZ found

next:
	MOVL BX, R8
	ADDQ $32, DI
	JMP loop

found:
	BSFL AX, AX
	ADDQ DI, AX
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

none:
	VZEROUPPER
	MOVQ CX, ret+24(FP)
	RET
