#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cuda.h>
__global__ void empty(float*) {}
__global__ void empty2(float*, int) {}
static double now(){return std::chrono::duration<double,std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();}
int main(int argc,char**argv){
  int n=argc>1?atoi(argv[1]):20000;
  float* p; cudaMalloc(&p,4096);
  cudaStream_t s; cudaStreamCreateWithFlags(&s,cudaStreamNonBlocking);
  for(int i=0;i<100;i++) empty<<<1,1,0,s>>>(p);
  cudaStreamSynchronize(s);
  for(int rep=0;rep<3;rep++){
    double t0=now();
    for(int i=0;i<n;i++) empty<<<1,1,0,s>>>(p);
    double t1=now();
    cudaStreamSynchronize(s);
    double t2=now();
    printf("native: enqueue loop %.3f us/kernel, total %.3f us/kernel\n",(t1-t0)/n,(t2-t0)/n);
  }
  for(int rep=0;rep<3;rep++){
    double t0=now();
    for(int i=0;i<n;i++) empty2<<<1,1,0,s>>>(p,i);
    double t1=now();
    cudaStreamSynchronize(s);
    double t2=now();
    printf("native varying argument: enqueue loop %.3f us/kernel, total %.3f us/kernel\n",(t1-t0)/n,(t2-t0)/n);
  }
  cudaFunction_t rf; cudaGetFuncBySymbol(&rf,(const void*)empty); CUfunction f=(CUfunction)rf;
  CUstream cs=(CUstream)s;
  for(int rep=0;rep<3;rep++){
    void* params[1]={&p};
    double t0=now();
    for(int i=0;i<n;i++) cuLaunchKernel(f,1,1,1,1,1,1,0,cs,params,nullptr);
    double t1=now();
    cudaStreamSynchronize(s);
    double t2=now();
    printf("driver kernelParams: enqueue loop %.3f us/kernel, total %.3f us/kernel\n",(t1-t0)/n,(t2-t0)/n);
  }
  for(int rep=0;rep<3;rep++){
    size_t size=sizeof(p);
    void* extra[]={CU_LAUNCH_PARAM_BUFFER_POINTER,&p,CU_LAUNCH_PARAM_BUFFER_SIZE,&size,CU_LAUNCH_PARAM_END};
    double t0=now();
    for(int i=0;i<n;i++) cuLaunchKernel(f,1,1,1,1,1,1,0,cs,nullptr,extra);
    double t1=now();
    cudaStreamSynchronize(s);
    double t2=now();
    printf("driver extra-buffer: enqueue loop %.3f us/kernel, total %.3f us/kernel\n",(t1-t0)/n,(t2-t0)/n);
  }
  // What making the context current costs per launch (Manifold does one of these per command).
  CUcontext ctx; cuCtxGetCurrent(&ctx);
  for(int rep=0;rep<3;rep++){
    void* params[1]={&p};
    double t0=now();
    for(int i=0;i<n;i++){ cuCtxSetCurrent(ctx); cuLaunchKernel(f,1,1,1,1,1,1,0,cs,params,nullptr); }
    double t1=now();
    cudaStreamSynchronize(s);
    double t2=now();
    printf("driver cuCtxSetCurrent+launch: enqueue loop %.3f us/kernel, total %.3f us/kernel\n",(t1-t0)/n,(t2-t0)/n);
  }
  for(int rep=0;rep<3;rep++){
    void* params[1]={&p};
    double t0=now();
    for(int i=0;i<n;i++){ CUcontext c; cuCtxGetCurrent(&c); if(c!=ctx) cuCtxSetCurrent(ctx); cuLaunchKernel(f,1,1,1,1,1,1,0,cs,params,nullptr); }
    double t1=now();
    cudaStreamSynchronize(s);
    double t2=now();
    printf("driver cuCtxGetCurrent+launch: enqueue loop %.3f us/kernel, total %.3f us/kernel\n",(t1-t0)/n,(t2-t0)/n);
  }
  return 0;
}
