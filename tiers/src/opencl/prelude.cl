// tessera's OpenCL prelude: the values of the language's functions where
// OpenCL has no built-in of the same meaning (engine `Func::apply`).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// Every tier computes `a * b + c` as two roundings: no fused multiply-add.
#pragma OPENCL FP_CONTRACT OFF

double t_truth(int holds) { return holds ? 1.0 : 0.0; }

// NaN-propagating, and -0 below +0 (IEEE 754-2019 minimum).
double t_min(double a, double b) {
    if (isnan(a) || isnan(b)) return NAN;
    if (a < b || (a == b && signbit(a))) return a;
    return b;
}

// NaN-propagating, and +0 above -0 (IEEE 754-2019 maximum).
double t_max(double a, double b) {
    if (isnan(a) || isnan(b)) return NAN;
    if (a > b || (a == b && !signbit(a))) return a;
    return b;
}

// Sorts a workspace's touched slots in place (heapsort: no recursion, no
// extra memory, n log n however the row is shaped), for workspaces in
// global memory (t_sort_keys) and in local memory (t_sort_keys_local).
// SIFT restores the heap below `root` in keys[0..n).
#define T_SORT_KEYS(SORT, SIFT, SPACE) \
void SIFT(SPACE uint* keys, long root, long n) { \
    for (;;) { \
        long child = 2 * root + 1; \
        if (child >= n) return; \
        if (child + 1 < n && keys[child] < keys[child + 1]) child++; \
        if (keys[root] >= keys[child]) return; \
        uint swap = keys[root]; \
        keys[root] = keys[child]; \
        keys[child] = swap; \
        root = child; \
    } \
} \
void SORT(SPACE uint* keys, long n) { \
    for (long root = n / 2 - 1; root >= 0; root--) SIFT(keys, root, n); \
    for (long end = n - 1; end > 0; end--) { \
        uint swap = keys[0]; \
        keys[0] = keys[end]; \
        keys[end] = swap; \
        SIFT(keys, 0, end); \
    } \
}
T_SORT_KEYS(t_sort_keys, t_sift_keys, __global)
T_SORT_KEYS(t_sort_keys_local, t_sift_keys_local, __local)

// Integer division and remainder as the engine defines them (`IntOp`): by
// 0 they give 0, and MIN / -1 wraps to MIN, where C's would trap.
long t_idiv(long a, long b) {
    if (b == 0) return 0;
    if (b == -1) return (long)(0UL - (ulong)a);
    return a / b;
}
long t_imod(long a, long b) {
    if (b == 0 || b == -1) return 0;
    return a % b;
}
// The low 32 bits, sign-extended.
long t_wrap32(long a) { return (long)(int)(uint)(ulong)a; }
