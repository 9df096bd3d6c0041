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
