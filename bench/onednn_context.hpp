// bench/onednn_context.hpp — what every oneDNN benchmark process records about oneDNN itself: its
// version and the ISA it dispatches to (the context lines the summaries print).
#pragma once

#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <string>

namespace loom_bench {

inline const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::all: return "all";
  }
  return "?";
}

/// Adds onednn_version and onednn_isa to the benchmark's context.
inline void add_onednn_context() {
  const dnnl::version_t* v = dnnl::version();
  benchmark::AddCustomContext("onednn_version", std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                                                    std::to_string(v->patch) + " (" + v->hash + ")");
  benchmark::AddCustomContext("onednn_isa", isa_name(dnnl::get_effective_cpu_isa()));
}

}  // namespace loom_bench
