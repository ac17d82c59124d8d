/*
 * unwind-arm64: an aarch64 program (built by tests/unit/t-symbolize.c with
 * aarch64-linux-gnu-gcc -static, run under qemu-aarch64) that stops in
 * capture(), three calls deep with no frame pointers, and prints what a
 * call_graph dwarf sample of it would hold: its user registers in perf's
 * arm64 order (X0..X28, X29, LR, SP, PC: only those unwinding reads are
 * captured, the others are 0), the stack from SP up (hex, up to the end of
 * its mapping) and its executable file maps.  The symbolizer then has to
 * unwind capture <- level2 <- level1 <- main from the CFI alone.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t sp, fp, lr, pc, stack_end;
static unsigned char copy[8192];
static size_t copied;

/* the registers here, then the stack above SP as the kernel would copy it
 * (memcpy's frame is below SP: the bytes copied are the ones sampled) */
__attribute__((noinline)) void capture(void)
{
	__asm__ volatile("mov %0, sp\n\tmov %1, x29\n\tmov %2, x30\n\tadr %3, ."
			 : "=r"(sp), "=r"(fp), "=r"(lr), "=r"(pc));
	copied = stack_end - sp < sizeof(copy) ? stack_end - sp : sizeof(copy);
	memcpy(copy, (const void *)(uintptr_t)sp, copied);
}

__attribute__((noinline)) int level2(int x)
{
	capture();
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int level1(int x)
{
	int r = level2(x * 2);

	__asm__ volatile("" ::: "memory");
	return r + 3;
}

int main(void)
{
	char line[512];
	FILE *m;
	uint64_t here = (uint64_t)(uintptr_t)&line;
	int r;

	m = fopen("/proc/self/maps", "r");
	while (m && fgets(line, sizeof(line), m)) {
		unsigned long long s, e, off;
		char perm[8], path[256] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &s, &e, perm, &off, path) < 4)
			continue;
		if (here >= s && here < e)
			stack_end = e;
		if (perm[2] == 'x' && path[0] == '/')
			printf("map 0x%llx 0x%llx 0x%llx %s\n", s, e, off, path);
	}
	if (m)
		fclose(m);
	r = level1(5);
	printf("regs");
	for (int i = 0; i < 33; i++)
		printf(" 0x%llx", (unsigned long long)(i == 29 ? fp : i == 30 ? lr : i == 31 ? sp : i == 32 ? pc : 0));
	printf("\nstack ");
	for (size_t i = 0; i < copied; i++)
		printf("%02x", copy[i]);
	printf("\n");
	return r == 14 ? 0 : 1;
}
