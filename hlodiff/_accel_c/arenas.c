/* Python's small objects in huge pages, for the rest of a short command.
 *
 * Why (issue 34, time): comparing the 300K-instruction pair holds 300+ MB, most of it small objects (instructions,
 * names, operand tuples, small dicts) that pymalloc carves from 1 MiB arenas, each mapped on its own in 4 KiB
 * pages. Every page is a fault the kernel must zero when first touched, and every dict probe and slot read of a
 * walk over 258K instructions lands on another page: a TLB miss each, as the address space is far larger than the
 * TLB covers in 4 KiB pages. Here the arenas come one after another from one reserved range the kernel is asked
 * to back with 2 MiB pages (madvise MADV_HUGEPAGE, taken where transparent huge pages are "always" or "madvise"):
 * a fault per 2 MiB, and a TLB entry covering 512 times as much.
 *
 * The range is reserved, not committed (MAP_NORESERVE): only the pages touched are resident, as before. An arena
 * pymalloc frees goes on a list and is the next one handed out (kept, as glibc keeps freed memory for the command:
 * _runtime.freed_memory_kept_for_command); arenas of another size, or past the range, go to the allocator that was
 * there before, which also frees every arena it made. Nothing a command computes depends on where objects live.
 */
#include "accel.h"

#include <sys/mman.h>

#define RESERVED ((size_t)4 << 30) /* address space only: resident is what is touched */
#define HUGE ((size_t)2 << 20)

static PyObjectArenaAllocator previous;
static char *base, *next_free, *end;
static void *freed; /* arenas given back: a list linked through their first word */
static size_t arena_size;

static void *arena_alloc(void *ctx, size_t size) {
    if (arena_size == 0 && size > 0 && HUGE % size == 0) arena_size = size; /* pymalloc asks for one size only */
    if (size == arena_size) {
        if (freed != NULL) {
            void *p = freed;
            freed = *(void **)p;
            return p;
        }
        if ((size_t)(end - next_free) >= size) {
            void *p = next_free;
            next_free += size;
            return p;
        }
    }
    return previous.alloc(previous.ctx, size);
}

static void arena_free(void *ctx, void *ptr, size_t size) {
    if ((char *)ptr >= base && (char *)ptr < end) {
        *(void **)ptr = freed;
        freed = ptr;
        return;
    }
    previous.free(previous.ctx, ptr, size);
}

/* huge_page_arenas() -> whether small objects now come from the reserved range (True once set; False where the
 * range cannot be reserved or huge pages cannot be asked for). The arena size is the first one pymalloc asks for
 * (1 MiB on 64-bit CPython 3.10+), if it divides 2 MiB; any other size goes to the previous allocator. */
PyObject *huge_page_arenas(PyObject *self, PyObject *unused) {
    if (base != NULL) Py_RETURN_TRUE;
#ifdef MADV_HUGEPAGE
    char *p = mmap(NULL, RESERVED + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) Py_RETURN_FALSE;
    char *aligned = (char *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (madvise(aligned, RESERVED, MADV_HUGEPAGE) != 0) {
        munmap(p, RESERVED + HUGE);
        Py_RETURN_FALSE;
    }
    base = next_free = aligned;
    end = aligned + RESERVED;
    PyObjectArenaAllocator mine = {NULL, arena_alloc, arena_free};
    PyObject_GetArenaAllocator(&previous);
    PyObject_SetArenaAllocator(&mine);
    Py_RETURN_TRUE;
#else
    Py_RETURN_FALSE;
#endif
}
