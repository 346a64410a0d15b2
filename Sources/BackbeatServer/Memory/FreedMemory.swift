#if canImport(Glibc)
import CMalloc
#endif

/// Returns to the kernel the pages that freed allocations left inside the heap.
///
/// glibc gives memory back only from the top of each heap, so after a flush frees its batch the freed pages in the
/// middle stay resident: `serve`'s resident size would stay near its peak for good, whatever is still live.
enum FreedMemory {
    static func release() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }
}
