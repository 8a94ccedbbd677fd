// go_asm_amd64.s — the assembly half of the go_asm fixture (see go_asm.go): crashAsm has a
// 24-byte frame (so the assembler gives it a frame-pointer prologue and .debug_frame CFI) and
// loads through its nil argument on the line marked below.
#include "textflag.h"

// func crashAsm(p *int64, depth int64) int64
TEXT ·crashAsm(SB), 0, $24-24
	MOVQ p+0(FP), AX
	MOVQ depth+8(FP), BX
	MOVQ BX, 8(SP)
	MOVQ (AX), CX // the nil dereference: SEGV_MAPERR at 0x0
	ADDQ BX, CX
	MOVQ CX, ret+16(FP)
	RET
