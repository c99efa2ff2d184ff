#include <immintrin.h>
#include <chrono>
#include <cstdio>
int main(){ __m512 a[24]; for(int i=0;i<24;++i)a[i]=_mm512_set1_ps(i*1e-3f); __m512 x=_mm512_set1_ps(0.999f), y=_mm512_set1_ps(1e-4f);
 long n=200000000; double best=1e9; for(int t=0;t<3;++t){auto t0=std::chrono::steady_clock::now();
 for(long k=0;k<n;++k){ _Pragma("GCC unroll 24") for(int i=0;i<24;++i) a[i]=_mm512_fmadd_ps(a[i],x,y); }
 double s=std::chrono::duration<double>(std::chrono::steady_clock::now()-t0).count(); if(s<best)best=s;}
 float o=0; for(int i=0;i<24;++i) o+=_mm512_reduce_add_ps(a[i]); printf("peak %.1f GFLOP/s (%g)\n", n*24*32/best/1e9, o);}
