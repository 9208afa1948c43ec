// A placeholder kernel for the T1 import fixture coulomb.json (not tuned by the tests).
extern "C" __global__ void directCoulombSum(const float4* atomInfo, int atoms, int gridDimensions, float* grid) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  float e = 0;
  for (int a = 0; a < atoms; ++a) e += atomInfo[a].w / (1.0f + atomInfo[a].x * x + atomInfo[a].y * y);
  grid[(blockIdx.z * gridDimensions + y) * gridDimensions + x] = e;
}
