// Included before <immintrin.h> by the sources that use SIMD intrinsics. GCC 12's AVX headers
// build some intrinsics from _mm*_undefined_*() (a deliberately undefined register), which its
// uninitialized-value warnings then report inside the headers: a known false positive. The
// pragmas hold for the rest of the including source, so this must come before the intrinsics'
// headers. -Wmaybe-uninitialized is GCC's alone (clang, which builds the sanitizer test tree,
// would refuse the unknown name).
#pragma once

#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
