#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
// mode 0: 8 row pointers (rows stride lda); mode 1: packed [d][8]
template<int MODE> __attribute__((noinline)) void tile(const float* a, long lda, const float* b, long ldb, long depth, float* out) {
  __m512 acc[8][3];
  _Pragma("GCC unroll 8") for (int r=0;r<8;++r) _Pragma("GCC unroll 3") for(int v=0;v<3;++v) acc[r][v]=_mm512_setzero_ps();
  for (long d=0; d<depth; ++d) {
    __m512 b0=_mm512_loadu_ps(b+d*ldb), b1=_mm512_loadu_ps(b+d*ldb+16), b2=_mm512_loadu_ps(b+d*ldb+32);
    _Pragma("GCC unroll 8") for (int r=0;r<8;++r){ __m512 s=_mm512_set1_ps(MODE==0? a[r*lda+d] : a[d*8+r]); acc[r][0]=_mm512_fmadd_ps(s,b0,acc[r][0]);acc[r][1]=_mm512_fmadd_ps(s,b1,acc[r][1]);acc[r][2]=_mm512_fmadd_ps(s,b2,acc[r][2]);}
  }
  _Pragma("GCC unroll 8") for (int r=0;r<8;++r) _Pragma("GCC unroll 3") for(int v=0;v<3;++v) _mm512_storeu_ps(out+r*48+v*16, acc[r][v]);
}
int main(int argc,char**argv){
  long ldb=atol(argv[1]); long depthTot=atol(argv[2]); long blk=atol(argv[3]); long rowsN=atol(argv[4]); int mode=atoi(argv[5]);
  float* B=(float*)aligned_alloc(64, (depthTot*ldb+64)*4); for(long i=0;i<depthTot*ldb+64;++i)B[i]=1e-3f*(i%7);
  float* A=(float*)aligned_alloc(64, rowsN*depthTot*4); for(long i=0;i<rowsN*depthTot;++i)A[i]=1e-3f*(i%5);
  static float out[64][8*48];
  long reps = 4000000000L/(depthTot*rowsN*48*2); if(reps<1)reps=1;
  double best=1e9;
  for(int t=0;t<5;++t){ auto t0=std::chrono::steady_clock::now();
  for(long k=0;k<reps;++k) for(long d0=0; d0<depthTot; d0+=blk) for(long m=0;m<rowsN;m+=8){
     if(mode==0) tile<0>(A+m*depthTot+d0, depthTot, B+d0*ldb, ldb, blk, out[(m/8)%64]);
     else tile<1>(A+m*depthTot+d0*8, 8, B+d0*ldb, ldb, blk, out[(m/8)%64]); }
  double s=std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count(); if(s<best)best=s;}
  printf("ldb %ld depth %ld blk %ld rows %ld mode %d: %.1f GFLOP/s (%g)\n", ldb, depthTot, blk, rowsN, mode, reps*rowsN*depthTot*48*2/best/1e9, out[0][5]);
}
