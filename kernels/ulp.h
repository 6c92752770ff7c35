/*
 * ulp.h: the dialect header that lets one kernel body compile as CUDA C++
 * (NVRTC) and as OpenCL C. Each kernels/<family>.cl includes it; ulpgate
 * embeds both at build time and splices the header in at the #include
 * line (src/backend/kernels.rs), so no include path is needed at run time.
 *
 *   KERNEL name(...)       an entry point (unmangled in CUDA, so the host
 *                          finds it by name in both dialects)
 *   FUNC                   a helper function
 *   GLOBAL                 the address space of buffer parameters
 *   LOCAL                  a work-group (CUDA: block) shared array, declared
 *                          at kernel scope
 *   LOCAL_PTR              the address space of a pointer parameter to one
 *                          (CUDA pointers are generic, OpenCL's carry it)
 *   BARRIER()              work-group barrier over local memory
 *   LOCAL_ID(d) GROUP_ID(d) LOCAL_SIZE(d) NUM_GROUPS(d) GLOBAL_ID(d)
 *                          work-item ids; d is a literal 0, 1 or 2
 *   ulp_u8 .. ulp_u64      fixed-width unsigned types, ulp_i8 .. ulp_i64
 *                          signed ones (ulp_u64/ulp_i64 are 64-bit in both
 *                          dialects)
 *   ULP_CLZ64(x)           leading zeros of a ulp_u64 (64 for 0)
 *   ULP_F32_BITS(x) ULP_F32_FROM(u) ULP_F64_BITS(x) ULP_F64_FROM(u)
 *                          a float's bits as a ulp_u32 and back; a double's
 *                          as a ulp_u64 and back
 *   double                 64-bit floats: CUDA has them, OpenCL enables
 *                          cl_khr_fp64 below where the device offers it
 *   ADD_RN SUB_RN MUL_RN DIV_RN
 *                          f32 arithmetic rounded to nearest, one rounding
 *                          per operation and never fused into an FMA, so a
 *                          float kernel replicates the CPU reference's
 *                          operation order bit for bit.
 *
 * Contraction is also off for plain operators: OpenCL by the FP_CONTRACT
 * pragma below, NVRTC by --fmad=false (src/backend/cuda/nvrtc.rs).
 */
#ifndef ULP_H
#define ULP_H

#if defined(__CUDACC__)

#define KERNEL extern "C" __global__ void
#define FUNC static __device__ __forceinline__
#define GLOBAL
#define LOCAL __shared__
#define LOCAL_PTR
#define BARRIER() __syncthreads()

typedef unsigned char ulp_u8;
typedef unsigned short ulp_u16;
typedef unsigned int ulp_u32;
typedef unsigned long long ulp_u64;
typedef signed char ulp_i8;
typedef short ulp_i16;
typedef int ulp_i32;
typedef long long ulp_i64;

#define ULP_CLZ64(x) ((ulp_u32)__clzll((long long)(x)))
#define ULP_F32_BITS(x) ((ulp_u32)__float_as_uint(x))
#define ULP_F32_FROM(u) __uint_as_float((ulp_u32)(u))
#define ULP_F64_BITS(x) ((ulp_u64)__double_as_longlong(x))
#define ULP_F64_FROM(u) __longlong_as_double((long long)(u))

/* d must be a literal 0, 1 or 2: it selects the member by token pasting. */
#define ULP_DIM_0(v) ((ulp_u32)(v).x)
#define ULP_DIM_1(v) ((ulp_u32)(v).y)
#define ULP_DIM_2(v) ((ulp_u32)(v).z)
#define ULP_DIM(v, d) ULP_DIM_##d(v)
#define LOCAL_ID(d) ULP_DIM(threadIdx, d)
#define GROUP_ID(d) ULP_DIM(blockIdx, d)
#define LOCAL_SIZE(d) ULP_DIM(blockDim, d)
#define NUM_GROUPS(d) ULP_DIM(gridDim, d)
#define GLOBAL_ID(d) (GROUP_ID(d) * LOCAL_SIZE(d) + LOCAL_ID(d))

#define ADD_RN(a, b) __fadd_rn((a), (b))
#define SUB_RN(a, b) __fsub_rn((a), (b))
#define MUL_RN(a, b) __fmul_rn((a), (b))
#define DIV_RN(a, b) __fdiv_rn((a), (b))

#elif defined(__OPENCL_VERSION__)

#pragma OPENCL FP_CONTRACT OFF

#define KERNEL __kernel void
#define FUNC static inline
#define GLOBAL __global
#define LOCAL __local
#define LOCAL_PTR __local
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)

typedef uchar ulp_u8;
typedef ushort ulp_u16;
typedef uint ulp_u32;
typedef ulong ulp_u64;
typedef char ulp_i8;
typedef short ulp_i16;
typedef int ulp_i32;
typedef long ulp_i64;

#define ULP_CLZ64(x) ((ulp_u32)clz((ulong)(x)))
#define ULP_F32_BITS(x) as_uint((float)(x))
#define ULP_F32_FROM(u) as_float((uint)(u))
#define ULP_F64_BITS(x) as_ulong((double)(x))
#define ULP_F64_FROM(u) as_double((ulong)(u))

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define LOCAL_ID(d) ((ulp_u32)get_local_id(d))
#define GROUP_ID(d) ((ulp_u32)get_group_id(d))
#define LOCAL_SIZE(d) ((ulp_u32)get_local_size(d))
#define NUM_GROUPS(d) ((ulp_u32)get_num_groups(d))
#define GLOBAL_ID(d) ((ulp_u32)get_global_id(d))

/* OpenCL's + - * are correctly rounded; the host builds with
 * -cl-fp32-correctly-rounded-divide-sqrt where the device offers it. */
#define ADD_RN(a, b) ((a) + (b))
#define SUB_RN(a, b) ((a) - (b))
#define MUL_RN(a, b) ((a) * (b))
#define DIV_RN(a, b) ((a) / (b))

#else
#error "ulp.h: compile as CUDA (NVRTC) or OpenCL C"
#endif

/* Sample i of a plane of 1 or 2 bytes per sample (little-endian u16). */
FUNC ulp_u32 ulp_sample(GLOBAL const ulp_u8 *plane, ulp_u32 i, ulp_u32 bytes_per_sample)
{
    return bytes_per_sample == 1 ? (ulp_u32)plane[i] : (ulp_u32)((GLOBAL const ulp_u16 *)plane)[i];
}

#endif /* ULP_H */
