// Empty.cpp — the one source of the targets that only compile a precompiled header
// (cmake/HeadlabPch.cmake); the layers reuse their header, so LibTorch's and Qt's are parsed once.
