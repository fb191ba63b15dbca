// cuda.h as a build with HEADLAB_TORCH_CPU_ONLY=ON sees it (cmake/HeadlabTorch.cmake): a LibTorch
// without CUDA comes with no CUDA headers, but this machine may have them on the compiler's own
// search path (/usr/local/include). Included outside HEADLAB_TORCH_CUDA, it stops the build here.
#error "a CUDA header included outside HEADLAB_TORCH_CUDA: a LibTorch without CUDA has none"
