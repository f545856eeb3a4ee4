#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(int argc,char**argv){
  int n = argc>1?atoi(argv[1]):20000;
  cl_platform_id p; clGetPlatformIDs(1,&p,NULL);
  cl_device_id d; cl_int e=clGetDeviceIDs(p,CL_DEVICE_TYPE_GPU,1,&d,NULL); if(e){printf("no gpu %d\n",e);return 1;}
  cl_context c=clCreateContext(NULL,1,&d,NULL,NULL,&e);
  cl_command_queue q=clCreateCommandQueueWithProperties(c,d,NULL,&e);
  const char* src="kernel void empty(global float* unused) {} kernel void empty2(global float* unused, int v) {}";
  cl_program pr=clCreateProgramWithSource(c,1,&src,NULL,&e);
  e=clBuildProgram(pr,1,&d,"",NULL,NULL); if(e){printf("build %d\n",e);return 1;}
  cl_kernel k=clCreateKernel(pr,"empty",&e);
  cl_mem b=clCreateBuffer(c,CL_MEM_READ_WRITE,4096,NULL,&e);
  clSetKernelArg(k,0,sizeof(b),&b);
  size_t g=1;
  for(int i=0;i<100;i++) clEnqueueNDRangeKernel(q,k,1,NULL,&g,NULL,0,NULL,NULL);
  clFinish(q);
  for(int rep=0;rep<3;rep++){
  double t0=now();
  for(int i=0;i<n;i++) clEnqueueNDRangeKernel(q,k,1,NULL,&g,NULL,0,NULL,NULL);
  double t1=now();
  clFinish(q);
  double t2=now();
  printf("manifold: enqueue loop %.3f us/kernel, total %.3f us/kernel\n",(t1-t0)/n,(t2-t0)/n);
  }
  /* An argument that changes with every launch: no launch repeats the one before it. */
  cl_kernel k2=clCreateKernel(pr,"empty2",&e);
  clSetKernelArg(k2,0,sizeof(b),&b);
  for(int rep=0;rep<3;rep++){
  double t0=now();
  for(int i=0;i<n;i++){ clSetKernelArg(k2,1,sizeof(i),&i); clEnqueueNDRangeKernel(q,k2,1,NULL,&g,NULL,0,NULL,NULL); }
  double t1=now();
  clFinish(q);
  double t2=now();
  printf("manifold varying argument: enqueue loop %.3f us/kernel, total %.3f us/kernel\n",(t1-t0)/n,(t2-t0)/n);
  }
  return 0;
}
