// matserve-kernel-bench: times every SGEMM variant against cuBLAS, batched
// and grouped SGEMM against cuBLAS's batched and grouped calls, and Transpose
// (single and batched) against cublasSgeam and a device copy, and checks every
// output.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernels/bench/device_check.h"
#include "kernels/kernels.h"

namespace matserve::kernels {
namespace {

using bench::Fail;
using bench::FillUniform;
using bench::Poison;
using bench::RelError;
using bench::ToHost;

constexpr double kMaxRelError = 1e-5;
// The naive variant needs seconds per run past this many multiply-adds.
constexpr double kNaiveMaxMnk = 8589934592.0;  // 2^33
constexpr int kWarmupRuns = 3;
constexpr int kEstimateRuns = 3;
constexpr int kMinSamples = 20;
constexpr int kMaxSamples = 1000;
constexpr double kTargetMs = 200.0;
// Short kernels are timed in back-to-back batches of at least this long, so
// neither the event resolution (~0.5 us) nor a launch gap between two events
// shows up in the per-run time.
constexpr double kMinSampleMs = 0.1;
constexpr int kMaxBatch = 100;
constexpr int kCheckedSamples = 256;
// The transpose rows: every rung, then what kAuto picks (a copy for vectors).
// One matrix is too large for the packed kernel (it would run as large_tile).
constexpr TransposeVariant kAllTransposeVariants[] = {
    TransposeVariant::kTiled, TransposeVariant::kWide,
    TransposeVariant::kLargeTile, TransposeVariant::kAuto};
constexpr TransposeVariant kAllBatchedTransposeVariants[] = {
    TransposeVariant::kTiled, TransposeVariant::kWide,
    TransposeVariant::kLargeTile, TransposeVariant::kPacked,
    TransposeVariant::kAuto};

struct GemmShape {
  int64_t m, k, n;
};
struct TransposeShape {
  int64_t rows, cols;
};
struct BatchedShape {
  int64_t m, k, n, batch;
};
struct GroupedSet {
  int64_t count, max_side;  // count problems, each size uniform in [1, max]
};
struct BatchedTransposeShape {
  int64_t rows, cols, batch;
};

struct Options {
  std::vector<GemmShape> sgemm = {{1024, 1024, 1024}, {2048, 2048, 2048},
                                  {4096, 4096, 4096}, {8192, 8192, 8192},
                                  {4095, 4095, 4095}, {1000, 3000, 777},
                                  {64, 4096, 4096},   {4096, 64, 4096},
                                  {4096, 4096, 64},   {256, 256, 256}};
  std::vector<TransposeShape> transpose = {{4096, 4096}, {8192, 8192},
                                           {1000, 3000}, {1, 1 << 24},
                                           {1 << 24, 1}, {4093, 4099}};
  std::vector<BatchedShape> batched = {
      {16, 16, 16, 4096},    {32, 32, 32, 4096},   {64, 64, 64, 4096},
      {128, 128, 128, 1024}, {256, 256, 256, 256}, {512, 512, 512, 64},
      {17, 31, 29, 4096},    {256, 256, 256, 150}, {300, 300, 300, 300},
      {448, 448, 448, 100}};
  std::vector<GroupedSet> grouped = {{1024, 64}, {256, 256}, {64, 1024}};
  std::vector<BatchedTransposeShape> transpose_batched = {
      {16, 16, 4096},  {16, 16, 65536}, {32, 32, 4096},  {64, 64, 4096},
      {256, 256, 256}, {1000, 3, 1000}, {3, 1000, 1000}, {33, 17, 4096}};
  // Forced shapes timed beside the rules' choice in each batch (none unless
  // --batched_tiles names some).
  std::vector<BatchTiles> batched_tiles;
  std::string csv_path;
};

constexpr char kUsage[] =
    "usage: matserve-kernel-bench [--quick] [--sgemm=MxKxN,...|none]\n"
    "         [--batched=MxKxNxBATCH,...|none] [--grouped=COUNTxMAX,...|none]\n"
    "         [--batched_tiles=NAME,...|all] [--transpose=RxC,...|none]\n"
    "         [--transpose_batched=RxCxBATCH,...|none] [--csv=PATH]\n"
    "Times each SGEMM variant against cublasSgemm (fp32, no TF32), batched "
    "and\n"
    "grouped SGEMM against cublasSgemmStridedBatched and\n"
    "cublasSgemmGroupedBatched (and a launch a problem), and Transpose\n"
    "against cublasSgeam and a device-to-device copy, on random inputs\n"
    "rotated past the L2, and checks\n"
    "every output against cuBLAS (transposes bit-exactly).\n"
    "  --quick        short lists: SGEMM 1024^3, 2048^3, 1000x3000x777;\n"
    "                 batched 64^3 x 4096; grouped 256 up to 256;\n"
    "                 transpose 4096x4096, 1000x3000, 1x16777216;\n"
    "                 batched transpose 64x64 x 4096\n"
    "  --sgemm=...    SGEMM shapes as M x K x N (A is MxK, B is KxN)\n"
    "  --batched=...  strided batches: M x K x N x batch count\n"
    "  --batched_tiles=...  also time each batch in these warp-tiled shapes\n"
    "                 (small, quad, quad_few, mid, wide, tall, big; all),\n"
    "                 forced on the whole batch: rows tiles_NAME\n"
    "  --grouped=...  grouped sets: COUNT problems of random M, K, N in\n"
    "                 [1, MAX] (fixed seed)\n"
    "  --transpose=.. transpose shapes as rows x cols of the input\n"
    "  --transpose_batched=...  rows x cols x batch count\n"
    "  --csv=PATH     also write every row as CSV\n"
    "Exit status: 0 all outputs right, 1 some row WRONG, 2 usage or CUDA "
    "error.\n";

// The items of a comma-separated list, empty ones included ("a,,b" has three).
std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> items;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    items.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

// Parses "AxBxC,DxExF" into groups of `dims` sizes in [1, INT_MAX] (cuBLAS
// takes int sizes); "none" is the empty list.
bool ParseShapes(const std::string& text, int dims,
                 std::vector<std::vector<int64_t>>* shapes) {
  shapes->clear();
  if (text == "none") return true;
  for (const std::string& item : SplitCommas(text)) {
    std::vector<int64_t> shape;
    const char* p = item.c_str();
    while (true) {
      char* rest = nullptr;
      const long long value = std::strtoll(p, &rest, 10);
      if (rest == p || value < 1 || value > INT_MAX) return false;
      shape.push_back(value);
      if (*rest == '\0') break;
      if (*rest != 'x') return false;
      p = rest + 1;
    }
    if (static_cast<int>(shape.size()) != dims) return false;
    shapes->push_back(shape);
  }
  return true;
}

// Parses "small,mid" into tiles, "all" into every forced shape; "" is none.
bool ParseBatchTilesList(const std::string& text,
                         std::vector<BatchTiles>* tiles) {
  tiles->clear();
  if (text.empty()) return true;
  if (text == "all") {
    tiles->assign(std::begin(kBatchTiles), std::end(kBatchTiles));
    return true;
  }
  for (const std::string& name : SplitCommas(text)) {
    BatchTiles parsed = BatchTiles::kAuto;
    if (!ParseBatchTiles(name.c_str(), &parsed) ||
        parsed == BatchTiles::kAuto) {
      return false;
    }
    tiles->push_back(parsed);
  }
  return true;
}

// Returns false (after printing why) on a bad flag; exits 0 for --help.
bool ParseOptions(int argc, char** argv, Options* options) {
  std::string sgemm, batched, batched_tiles, grouped, transpose,
      transpose_batched;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value_of = [&](const char* flag, std::string* value) {
      const std::string prefix = std::string(flag) + "=";
      if (arg.compare(0, prefix.size(), prefix) != 0) return false;
      *value = arg.substr(prefix.size());
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--quick") {
      quick = true;
    } else if (!value_of("--sgemm", &sgemm) &&
               !value_of("--batched", &batched) &&
               !value_of("--batched_tiles", &batched_tiles) &&
               !value_of("--grouped", &grouped) &&
               !value_of("--transpose", &transpose) &&
               !value_of("--transpose_batched", &transpose_batched) &&
               !value_of("--csv", &options->csv_path)) {
      std::fprintf(stderr, "unknown flag: %s\n%s", arg.c_str(), kUsage);
      return false;
    }
  }
  if (quick) {
    options->sgemm = {
        {1024, 1024, 1024}, {2048, 2048, 2048}, {1000, 3000, 777}};
    options->batched = {{64, 64, 64, 4096}};
    options->grouped = {{256, 256}};
    options->transpose = {{4096, 4096}, {1000, 3000}, {1, 1 << 24}};
    options->transpose_batched = {{64, 64, 4096}};
  }
  // Replaces `list` with the shapes in `text` (when given) through `make`.
  auto parse = [](const char* flag, const std::string& text, int dims,
                  const char* want, auto* list, auto make) {
    if (text.empty()) return true;
    std::vector<std::vector<int64_t>> shapes;
    if (!ParseShapes(text, dims, &shapes)) {
      std::fprintf(stderr, "bad --%s=%s (want %s,...)\n", flag, text.c_str(),
                   want);
      return false;
    }
    list->clear();
    for (const auto& s : shapes) list->push_back(make(s));
    return true;
  };
  if (!ParseBatchTilesList(batched_tiles, &options->batched_tiles)) {
    std::fprintf(stderr, "bad --batched_tiles=%s\n%s", batched_tiles.c_str(),
                 kUsage);
    return false;
  }
  using Shape = std::vector<int64_t>;
  return parse("sgemm", sgemm, 3, "MxKxN", &options->sgemm,
               [](const Shape& s) {
                 return GemmShape{s[0], s[1], s[2]};
               }) &&
         parse("batched", batched, 4, "MxKxNxBATCH", &options->batched,
               [](const Shape& s) {
                 return BatchedShape{s[0], s[1], s[2], s[3]};
               }) &&
         parse("grouped", grouped, 2, "COUNTxMAX", &options->grouped,
               [](const Shape& s) {
                 return GroupedSet{s[0], s[1]};
               }) &&
         parse("transpose", transpose, 2, "RxC", &options->transpose,
               [](const Shape& s) {
                 return TransposeShape{s[0], s[1]};
               }) &&
         parse("transpose_batched", transpose_batched, 3, "RxCxBATCH",
               &options->transpose_batched, [](const Shape& s) {
                 return BatchedTransposeShape{s[0], s[1], s[2]};
               });
}

struct CudaFree {
  void operator()(float* p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<float, CudaFree>;

DeviceBuffer AllocateRandom(int64_t count, uint64_t seed, cudaStream_t stream) {
  float* data = nullptr;
  CHECK(cudaMalloc(&data, count * sizeof(float)));
  FillUniform(data, count, seed, stream);
  return DeviceBuffer(data);
}

// Input sets rotated between timed runs: one rotation touches more than twice
// the L2, so no run finds its operands still cached from the one before.
int64_t InputSets(int64_t bytes_per_set, int64_t l2_bytes) {
  return 2 * l2_bytes / bytes_per_set + 1;
}

// `floats` rounded up to 256 bytes. Each operand of each input set starts on
// 256 bytes, as its own cudaMalloc'd buffer would, so that every set takes the
// same paths. (Packed back to back, the sets' operands started on 16 bytes in
// one set and off them in the next, and a batch's runs mixed 16-byte copies
// with element-wise ones: docs/benchmarks.md, session 66.)
int64_t Aligned(int64_t floats) { return (floats + 63) / 64 * 64; }

struct Timing {
  double median_ms;  // per run
  int samples;
  int batch;  // runs averaged into each sample
  double iqr_pct;
};

// Times run(i), i = 0, 1, ... (i picks the input set), with device events and
// returns the median over samples of `batch` back-to-back runs each.
template <typename Run>
Timing Time(cudaStream_t stream, const Run& run) {
  int call = 0;
  // Module load, cuBLAS's kernel choice and the clock ramp stay out of it.
  for (; call < kWarmupRuns; ++call) run(call);
  std::vector<cudaEvent_t> events(2 * kMaxSamples);
  for (cudaEvent_t& event : events) CHECK(cudaEventCreate(&event));
  CHECK(cudaEventRecord(events[0], stream));
  for (int i = 0; i < kEstimateRuns; ++i) run(call++);
  CHECK(cudaEventRecord(events[1], stream));
  CHECK(cudaEventSynchronize(events[1]));
  float estimate_ms = 0;
  CHECK(cudaEventElapsedTime(&estimate_ms, events[0], events[1]));
  estimate_ms = std::max(estimate_ms / kEstimateRuns, 1e-4f);

  Timing timing;
  timing.batch =
      std::clamp(static_cast<int>(kMinSampleMs / estimate_ms), 1, kMaxBatch);
  timing.samples =
      std::clamp(static_cast<int>(kTargetMs / (estimate_ms * timing.batch)),
                 kMinSamples, kMaxSamples);
  for (int s = 0; s < timing.samples; ++s) {
    CHECK(cudaEventRecord(events[2 * s], stream));
    for (int b = 0; b < timing.batch; ++b) run(call++);
    CHECK(cudaEventRecord(events[2 * s + 1], stream));
  }
  CHECK(cudaEventSynchronize(events[2 * timing.samples - 1]));
  std::vector<double> ms(timing.samples);
  for (int s = 0; s < timing.samples; ++s) {
    float elapsed = 0;
    CHECK(cudaEventElapsedTime(&elapsed, events[2 * s], events[2 * s + 1]));
    ms[s] = static_cast<double>(elapsed) / timing.batch;
  }
  for (cudaEvent_t event : events) CHECK(cudaEventDestroy(event));
  std::sort(ms.begin(), ms.end());
  const int n = timing.samples;
  timing.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  timing.iqr_pct = 100 * (ms[3 * n / 4] - ms[n / 4]) / timing.median_ms;
  return timing;
}

std::string TimingNote(const Timing& timing) {
  char note[64];
  if (timing.batch > 1) {
    std::snprintf(note, sizeof(note), "n=%dx%d IQR %.1f%%", timing.samples,
                  timing.batch, timing.iqr_pct);
  } else {
    std::snprintf(note, sizeof(note), "n=%d IQR %.1f%%", timing.samples,
                  timing.iqr_pct);
  }
  return note;
}

// One table row; an empty field does not apply ("-" in the table, empty in
// the CSV).
struct Row {
  std::string kind, shape, impl;
  std::optional<double> ms = {}, rate = {}, pct_of_ref = {}, rel_error = {};
  std::string note = "";  // starts with "WRONG" when the output is wrong
  bool wrong = false;
  std::optional<double> pct_of_roofline = {};
};

std::string Format(std::optional<double> value, const char* format) {
  if (!value) return "";
  char text[32];
  std::snprintf(text, sizeof(text), format, *value);
  return text;
}

std::string CsvQuote(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c == '"' ? std::string(2, c) : std::string(1, c);
  }
  return quoted + "\"";
}

class KernelBench {
 public:
  KernelBench() {
    int device = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaGetDeviceProperties(&properties_, device));
    CHECK(cudaDeviceGetAttribute(&clock_khz_, cudaDevAttrClockRate, device));
    CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CHECK(cublasCreate(&cublas_));
    CHECK(cublasSetStream(cublas_, stream_));
    // Plain fp32 FMA, the arithmetic our kernels do: no TF32 tensor ops.
    CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
  }
  ~KernelBench() {
    cublasDestroy(cublas_);
    cudaStreamDestroy(stream_);
  }

  void PrintHeader() {
    int runtime = 0, driver = 0, cublas = 0;
    CHECK(cudaRuntimeGetVersion(&runtime));
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cublasGetVersion(cublas_, &cublas));
    std::printf("matserve-kernel-bench\n");
    std::printf(
        "device: %s, sm_%d%d, %d SMs, L2 %.1f MiB, max clock %d MHz, "
        "%.1f GiB\n",
        properties_.name, properties_.major, properties_.minor,
        properties_.multiProcessorCount, properties_.l2CacheSize / 1048576.0,
        clock_khz_ / 1000, properties_.totalGlobalMem / 1073741824.0);
    std::printf(
        "CUDA runtime %d.%d, driver %d.%d, cuBLAS %d.%d.%d "
        "(CUBLAS_DEFAULT_MATH: fp32, no TF32)\n",
        runtime / 1000, runtime % 1000 / 10, driver / 1000, driver % 1000 / 10,
        cublas / 10000, cublas % 10000 / 100, cublas % 100);
    std::printf(
        "ms: median over n samples after %d warm-up runs; n=SxB: each sample "
        "the mean of B back-to-back runs;\nIQR: interquartile range of the "
        "samples over the median; rel_err > %.0e or NaN: WRONG\n",
        kWarmupRuns + kEstimateRuns, kMaxRelError);
    std::printf(
        "%%roof: the time a roofline allows over the time taken: fp32 FMA peak "
        "%.1f TFLOP/s (SMs x 128 x 2 x max clock),\nmemory: a 256 MiB "
        "device-to-device copy, %.0f GB/s read + written\n",
        PeakFlops() * 1e-12, CopyBandwidth() * 1e-9);
    // These turn TF32 or emulation on behind the math mode's back.
    for (const char* name :
         {"NVIDIA_TF32_OVERRIDE", "CUBLAS_EMULATE_SINGLE_PRECISION"}) {
      if (const char* value = std::getenv(name)) {
        std::printf("warning: %s=%s is set\n", name, value);
      }
    }
  }

  void RunSgemmTable(const std::vector<GemmShape>& shapes) {
    if (shapes.empty()) return;
    std::printf(
        "\nSGEMM: row-major fp32 C = A*B, shape MxKxN; ms: median per run; "
        "rel_err: ||C - C_cublas||_F / ||C_cublas||_F\n"
        "(cublas row: vs fp64 on %d sampled elements of C)\n",
        kCheckedSamples);
    PrintTableHeader("TFLOP/s", "%cuBLAS");
    for (const GemmShape& shape : shapes) RunSgemm(shape);
  }

  void RunTransposeTable(const std::vector<TransposeShape>& shapes) {
    if (shapes.empty()) return;
    std::printf(
        "\nTranspose: out = in^T, shape RxC of the input; GB/s: bytes read + "
        "written; rel_err vs cublas_geam,\nwhich must match bit-exactly "
        "(cublas_geam row: vs the host's transpose)\n");
    PrintTableHeader("GB/s", "%memcpy");
    for (const TransposeShape& shape : shapes) RunTranspose(shape);
  }

  void RunBatchedTable(const std::vector<BatchedShape>& shapes,
                       const std::vector<BatchTiles>& tiles) {
    if (shapes.empty()) return;
    std::printf(
        "\nStrided-batched SGEMM: BATCH same-shape products in one launch, "
        "shape MxKxN/BATCH; rel_err vs\ncublasSgemmStridedBatched (cublas "
        "row: its first product vs fp64 on %d sampled elements);\nmemcpy_d2d: "
        "a device copy moving the batch's bytes, the floor for any kernel\n",
        kCheckedSamples);
    PrintTableHeader("TFLOP/s", "%cuBLAS");
    for (const BatchedShape& shape : shapes) RunBatched(shape, tiles);
  }

  void RunGroupedTable(const std::vector<GroupedSet>& sets) {
    if (sets.empty()) return;
    std::printf(
        "\nGrouped SGEMM: COUNT products of random shapes (M, K, N uniform in "
        "[1, MAX]) in one launch,\nshape COUNT<=MAX; %%cuBLAS against "
        "cublasSgemmGroupedBatched (one group per problem); cublas_loop: one\n"
        "cublasSgemm call per problem; matserve_each: one Sgemm call per "
        "problem;\nrel_err vs cublas_loop\n");
    PrintTableHeader("TFLOP/s", "%cuBLAS");
    for (const GroupedSet& set : sets) RunGrouped(set);
  }

  void RunTransposeBatchedTable(
      const std::vector<BatchedTransposeShape>& shapes) {
    if (shapes.empty()) return;
    std::printf(
        "\nBatched transpose: BATCH same-shape matrices in one launch, shape "
        "RxC/BATCH; GB/s: bytes read + written;\nrel_err vs the host's "
        "transpose, which must match bit-exactly (cuBLAS has no batched "
        "transpose)\n");
    PrintTableHeader("GB/s", "%memcpy");
    for (const BatchedTransposeShape& shape : shapes) {
      RunTransposeBatched(shape);
    }
  }

  int wrong_rows() const { return wrong_rows_; }

  bool WriteCsv(const std::string& path) const {
    FILE* file = std::fopen(path.c_str(), "w");
    if (file == nullptr) return false;
    std::fputs(
        "kind,shape,impl,ms,tflops_or_gbps,pct_of_ref,pct_of_roofline,"
        "rel_error,note\n",
        file);
    for (const Row& row : rows_) {
      std::fprintf(
          file, "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", row.kind.c_str(),
          row.shape.c_str(), row.impl.c_str(), Format(row.ms, "%.6g").c_str(),
          Format(row.rate, "%.6g").c_str(),
          Format(row.pct_of_ref, "%.4g").c_str(),
          Format(row.pct_of_roofline, "%.4g").c_str(),
          Format(row.rel_error, "%.3e").c_str(), CsvQuote(row.note).c_str());
    }
    return std::fclose(file) == 0;
  }

 private:
  static void PrintTableHeader(const char* rate, const char* pct) {
    std::printf("%-20s %-18s %10s %9s %8s %6s %9s  %s\n", "shape", "impl", "ms",
                rate, pct, "%roof", "rel_err", "note");
  }

  void Add(Row row) {
    auto cell = [](std::optional<double> value, const char* format) {
      return value ? Format(value, format) : std::string("-");
    };
    std::printf("%-20s %-18s %10s %9s %8s %6s %9s  %s\n", row.shape.c_str(),
                row.impl.c_str(), cell(row.ms, "%.4f").c_str(),
                cell(row.rate, "%.2f").c_str(),
                cell(row.pct_of_ref, "%.1f").c_str(),
                cell(row.pct_of_roofline, "%.0f").c_str(),
                cell(row.rel_error, "%.1e").c_str(), row.note.c_str());
    std::fflush(stdout);
    wrong_rows_ += row.wrong;
    rows_.push_back(std::move(row));
  }

  // Runs `launch` once into a poisoned `out` and returns what it wrote.
  template <typename Launch>
  std::vector<float> Output(float* out, int64_t count, const Launch& launch) {
    Poison(out, count, stream_);
    launch();
    return ToHost(out, count, stream_);
  }

  void RunSgemm(const GemmShape& shape) {
    const int64_t m = shape.m, k = shape.k, n = shape.n;
    const int64_t set = Aligned(m * k) + Aligned(k * n) + Aligned(m * n);
    const int64_t sets = InputSets(set * 4, properties_.l2CacheSize);
    DeviceBuffer buffer = AllocateRandom(sets * set, ++seed_, stream_);
    auto a = [&](int64_t i) { return buffer.get() + i % sets * set; };
    auto b = [&](int64_t i) { return a(i) + Aligned(m * k); };
    auto c = [&](int64_t i) { return b(i) + Aligned(k * n); };
    const std::string name =
        std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
    const double flop = 2.0 * m * n * k;

    // Row-major C = A*B is column-major C^T = B^T * A^T: the same bytes.
    auto cublas = [&](int64_t i) {
      const float one = 1, zero = 0;
      CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
                        static_cast<int>(m), static_cast<int>(k), &one, b(i),
                        static_cast<int>(n), a(i), static_cast<int>(k), &zero,
                        c(i), static_cast<int>(n)));
    };
    const std::vector<float> reference =
        Output(c(0), m * n, [&] { cublas(0); });
    const Timing cublas_timing = Time(stream_, cublas);
    const double bytes = 4.0 * (m * k + k * n + m * n);
    AddSgemmRow("sgemm", name, "cublas",
                SampledErrorVsFp64(shape, a(0), b(0), reference), cublas_timing,
                flop, bytes, cublas_timing.median_ms,
                ", " + std::to_string(sets) + " input sets");

    for (SgemmVariant variant : kSgemmVariants) {
      const char* impl = SgemmVariantName(variant);
      if (variant == SgemmVariant::kNaive &&
          static_cast<double>(m) * n * k > kNaiveMaxMnk) {
        Row skipped{"sgemm", name, impl};
        skipped.note = "skipped: M*N*K > 2^33, too slow";
        Add(skipped);
        continue;
      }
      auto ours = [&](int64_t i) {
        CHECK(Sgemm(m, n, k, a(i), b(i), c(i), stream_, variant));
      };
      const double error =
          RelError(Output(c(0), m * n, [&] { ours(0); }), reference);
      AddSgemmRow("sgemm", name, impl, error, Time(stream_, ours), flop, bytes,
                  cublas_timing.median_ms, "");
    }
  }

  // `bytes`: what the product must move at least (A and B read, C written).
  void AddSgemmRow(const char* kind, const std::string& name, const char* impl,
                   double error, const Timing& timing, double flop,
                   double bytes, double cublas_ms, const std::string& extra) {
    const bool wrong = !(error <= kMaxRelError);  // NaN is wrong too
    std::string note = TimingNote(timing) + extra;
    if (wrong) note = "WRONG (rel_err > 1e-5); " + note;
    Row row{kind,
            name,
            impl,
            timing.median_ms,
            flop / timing.median_ms / 1e9,
            100 * cublas_ms / timing.median_ms,
            error,
            note,
            wrong};
    row.pct_of_roofline = 100 * RooflineMs(flop, bytes) / timing.median_ms;
    Add(row);
  }

  // The time the faster of the two rooflines allows: fp32 FMA peak or the
  // large copy's bandwidth.
  double RooflineMs(double flop, double bytes) {
    return std::max(flop / PeakFlops(), bytes / CopyBandwidth()) * 1e3;
  }

  // fp32 FMA peak: 128 lanes per SM at the maximum clock, 2 flop each.
  double PeakFlops() const {
    return 2.0 * 128 * properties_.multiProcessorCount * clock_khz_ * 1e3;
  }

  // Bytes per second that a large device-to-device copy reads plus writes:
  // the memory roofline, measured once.
  double CopyBandwidth() {
    if (copy_bandwidth_ > 0) return copy_bandwidth_;
    constexpr int64_t kFloats = int64_t{1} << 26;  // 256 MiB each way
    DeviceBuffer from = AllocateRandom(kFloats, ++seed_, stream_);
    DeviceBuffer to = AllocateRandom(kFloats, ++seed_, stream_);
    const Timing copy = Time(stream_, [&](int64_t) {
      CHECK(cudaMemcpyAsync(to.get(), from.get(), kFloats * 4,
                            cudaMemcpyDeviceToDevice, stream_));
    });
    copy_bandwidth_ = 2.0 * kFloats * 4 / (copy.median_ms * 1e-3);
    return copy_bandwidth_;
  }

  // cuBLAS's own result against fp64 dot products on a fixed sample of C:
  // catches a wrong call (leading dimensions, operand order) that would make
  // every comparison with it meaningless.
  double SampledErrorVsFp64(const GemmShape& shape, const float* a,
                            const float* b, const std::vector<float>& c) {
    const std::vector<float> host_a = ToHost(a, shape.m * shape.k, stream_);
    const std::vector<float> host_b = ToHost(b, shape.k * shape.n, stream_);
    std::mt19937_64 random(42);
    std::vector<float> sampled;
    std::vector<double> expected;
    for (int s = 0; s < kCheckedSamples; ++s) {
      const int64_t i = random() % shape.m, j = random() % shape.n;
      double dot = 0;
      for (int64_t p = 0; p < shape.k; ++p) {
        dot += static_cast<double>(host_a[i * shape.k + p]) *
               host_b[p * shape.n + j];
      }
      sampled.push_back(c[i * shape.n + j]);
      expected.push_back(dot);
    }
    return RelError(sampled, expected);
  }

  void RunTranspose(const TransposeShape& shape) {
    const int64_t rows = shape.rows, cols = shape.cols;
    const int64_t count = rows * cols;
    const int64_t bytes = count * 4;
    const int64_t set = 2 * Aligned(count);  // floats: in, out
    const int64_t sets = InputSets(2 * bytes, properties_.l2CacheSize);
    DeviceBuffer buffer = AllocateRandom(sets * set, ++seed_, stream_);
    auto in = [&](int64_t i) { return buffer.get() + i % sets * set; };
    auto out = [&](int64_t i) { return in(i) + Aligned(count); };
    const std::string name = std::to_string(rows) + "x" + std::to_string(cols);

    // The roofline: a copy moves the same bytes with no reordering.
    const Timing copy = Time(stream_, [&](int64_t i) {
      CHECK(cudaMemcpyAsync(out(i), in(i), bytes, cudaMemcpyDeviceToDevice,
                            stream_));
    });
    AddTransposeRow("transpose", name, "memcpy_d2d", std::nullopt, copy,
                    copy.median_ms, bytes,
                    ", " + std::to_string(sets) + " input sets");

    // Row-major in (rows x cols) is column-major cols x rows, ld = cols, and
    // row-major out (cols x rows) is column-major rows x cols, ld = rows. So
    // out is C = op(A) with m = rows, n = cols, ldc = rows >= max(1, m), and
    // transa = T on A = in, lda = cols >= max(1, n) as op T requires. With
    // beta == 0 the docs say B need not be valid: nullptr, and ldb = rows
    // meets ldb >= max(1, m) for transb = N all the same.
    auto geam = [&](int64_t i) {
      const float one = 1, zero = 0;
      CHECK(cublasSgeam(
          cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows),
          static_cast<int>(cols), &one, in(i), static_cast<int>(cols), &zero,
          nullptr, static_cast<int>(rows), out(i), static_cast<int>(rows)));
    };
    const std::vector<float> reference =
        Output(out(0), count, [&] { geam(0); });
    const std::vector<float> input = ToHost(in(0), count, stream_);
    std::vector<float> expected(count);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        expected[c * rows + r] = input[r * cols + c];
      }
    }
    AddTransposeRow("transpose", name, "cublas_geam",
                    Mismatches(reference, expected), Time(stream_, geam),
                    copy.median_ms, bytes, "");

    for (TransposeVariant variant : kAllTransposeVariants) {
      auto ours = [&](int64_t i) {
        CHECK(Transpose(rows, cols, in(i), out(i), stream_, variant));
      };
      const std::vector<float> output = Output(out(0), count, [&] { ours(0); });
      AddTransposeRow("transpose", name, TransposeVariantName(variant),
                      Mismatches(output, reference), Time(stream_, ours),
                      copy.median_ms, bytes, "");
    }
  }

  void RunBatched(const BatchedShape& shape,
                  const std::vector<BatchTiles>& forced) {
    const int64_t m = shape.m, k = shape.k, n = shape.n, count = shape.batch;
    const int64_t floats = count * (m * k + k * n + m * n);  // A, B, C
    const int64_t set = Aligned(count * m * k) + Aligned(count * k * n) +
                        Aligned(count * m * n);
    const int64_t sets = InputSets(set * 4, properties_.l2CacheSize);
    DeviceBuffer buffer = AllocateRandom(sets * set, ++seed_, stream_);
    auto a = [&](int64_t i) { return buffer.get() + i % sets * set; };
    auto b = [&](int64_t i) { return a(i) + Aligned(count * m * k); };
    auto c = [&](int64_t i) { return b(i) + Aligned(count * k * n); };
    const std::string name = std::to_string(m) + "x" + std::to_string(k) + "x" +
                             std::to_string(n) + "/" + std::to_string(count);
    const double flop = 2.0 * m * n * k * count;

    auto cublas = [&](int64_t i) {  // column-major C^T = B^T * A^T, per item
      const float one = 1, zero = 0;
      CHECK(cublasSgemmStridedBatched(
          cublas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
          static_cast<int>(m), static_cast<int>(k), &one, b(i),
          static_cast<int>(n), k * n, a(i), static_cast<int>(k), m * k, &zero,
          c(i), static_cast<int>(n), m * n, static_cast<int>(count)));
    };
    const std::vector<float> reference =
        Output(c(0), count * m * n, [&] { cublas(0); });
    const Timing cublas_timing = Time(stream_, cublas);
    const std::vector<float> first(reference.begin(),
                                   reference.begin() + m * n);
    AddSgemmRow("batched", name, "cublas_strided",
                SampledErrorVsFp64({m, k, n}, a(0), b(0), first), cublas_timing,
                flop, 4.0 * floats, cublas_timing.median_ms,
                ", " + std::to_string(sets) + " input sets");

    auto time_ours = [&](BatchTiles tiles, const std::string& impl) {
      auto ours = [&](int64_t i) {
        CHECK(SgemmStridedBatched(m, n, k, a(i), m * k, b(i), k * n, c(i),
                                  m * n, count, stream_, tiles));
      };
      const double error =
          RelError(Output(c(0), count * m * n, [&] { ours(0); }), reference);
      AddSgemmRow("batched", name, impl.c_str(), error, Time(stream_, ours),
                  flop, 4.0 * floats, cublas_timing.median_ms, "");
    };
    time_ours(BatchTiles::kAuto, "matserve_batched");
    for (BatchTiles tiles : forced) {
      time_ours(tiles, std::string("tiles_") + BatchTilesName(tiles));
    }

    // A floor of the batch's own size: a device copy that reads and writes
    // as many bytes as the product (A and B read, C written), half each way.
    // Its %cuBLAS bounds what any kernel could reach. It overwrites B and C
    // with A's values, so it runs after the checks.
    const int64_t half = floats / 2;  // each way
    const Timing copy = Time(stream_, [&](int64_t i) {
      CHECK(cudaMemcpyAsync(a(i) + half, a(i), half * 4,
                            cudaMemcpyDeviceToDevice, stream_));
    });
    Row row{"batched",    name,
            "memcpy_d2d", copy.median_ms,
            std::nullopt, 100 * cublas_timing.median_ms / copy.median_ms,
            std::nullopt, TimingNote(copy) + ", the same bytes read + written"};
    row.pct_of_roofline = 100 * RooflineMs(flop, 4.0 * floats) / copy.median_ms;
    Add(row);
  }

  void RunGrouped(const GroupedSet& group) {
    // Shapes from a fixed seed; each matrix starts on 16 bytes, as a batcher
    // that packs requests would place them.
    std::mt19937_64 random(group.count * 1000003 + group.max_side);
    std::uniform_int_distribution<int64_t> side(1, group.max_side);
    std::vector<GemmShape> shapes(group.count);
    std::vector<int64_t> offsets;  // A, B, C of each problem
    int64_t set = 0;
    double flop = 0, bytes = 0;
    auto place = [&](int64_t floats) {
      offsets.push_back(set);
      set += (floats + 3) / 4 * 4;
      bytes += 4.0 * floats;
    };
    for (GemmShape& s : shapes) {
      s = {side(random), side(random), side(random)};
      place(s.m * s.k);
      place(s.k * s.n);
      place(s.m * s.n);
      flop += 2.0 * s.m * s.n * s.k;
    }
    const int64_t sets = InputSets(set * 4, properties_.l2CacheSize);
    DeviceBuffer buffer = AllocateRandom(sets * set, ++seed_, stream_);
    auto at = [&](int64_t i, int64_t p, int which) {
      return buffer.get() + i % sets * set + offsets[3 * p + which];
    };
    const std::string name =
        std::to_string(group.count) + "<=" + std::to_string(group.max_side);

    // One table of problems per input set, all on the device up front.
    std::vector<GroupedGemmEntry> entries(sets * group.count);
    GroupedPlan plan;
    for (int64_t i = 0; i < sets; ++i) {
      std::vector<GemmProblem> problems;
      for (int64_t p = 0; p < group.count; ++p) {
        const GemmShape& s = shapes[p];
        problems.push_back(
            {s.m, s.n, s.k, at(i, p, 0), at(i, p, 1), at(i, p, 2)});
      }
      plan = PlanSgemmGrouped(problems.data(), group.count,
                              &entries[i * group.count]);
      if (plan.blocks < 0) Fail("PlanSgemmGrouped", __FILE__, __LINE__, "-1");
    }
    GroupedGemmEntry* device_entries = nullptr;
    const size_t table_bytes = entries.size() * sizeof(GroupedGemmEntry);
    CHECK(cudaMalloc(&device_entries, table_bytes));
    std::unique_ptr<GroupedGemmEntry, void (*)(GroupedGemmEntry*)> table(
        device_entries, [](GroupedGemmEntry* p) { cudaFree(p); });
    CHECK(cudaMemcpy(device_entries, entries.data(), table_bytes,
                     cudaMemcpyHostToDevice));

    // cuBLAS's grouped call: the sizes on the host, the pointers on the device
    // (one array of A, B and C pointers per input set).
    const int count = static_cast<int>(group.count);
    std::vector<int> ms, ns, ks, group_size(count, 1);
    std::vector<float> alpha(count, 1), beta(count, 0);
    std::vector<cublasOperation_t> no_transpose(count, CUBLAS_OP_N);
    for (const GemmShape& s : shapes) {
      ms.push_back(static_cast<int>(s.m));
      ns.push_back(static_cast<int>(s.n));
      ks.push_back(static_cast<int>(s.k));
    }
    std::vector<const float*> pointers;  // per set: B, then A, then C arrays
    for (int64_t i = 0; i < sets; ++i) {
      for (int which : {1, 0, 2}) {
        for (int64_t p = 0; p < group.count; ++p) {
          pointers.push_back(at(i, p, which));
        }
      }
    }
    const float** device_pointers = nullptr;
    CHECK(cudaMalloc(&device_pointers, pointers.size() * sizeof(float*)));
    std::unique_ptr<const float*, void (*)(const float**)> pointer_table(
        device_pointers, [](const float** p) { cudaFree(p); });
    CHECK(cudaMemcpy(device_pointers, pointers.data(),
                     pointers.size() * sizeof(float*), cudaMemcpyHostToDevice));
    auto cublas_grouped = [&](int64_t i) {  // per problem C^T = B^T * A^T
      const float* const* set_pointers = device_pointers + i % sets * 3 * count;
      CHECK(cublasSgemmGroupedBatched(
          cublas_, no_transpose.data(), no_transpose.data(), ns.data(),
          ms.data(), ks.data(), alpha.data(), set_pointers, ns.data(),
          set_pointers + count, ks.data(), beta.data(),
          const_cast<float* const*>(set_pointers + 2 * count), ns.data(), count,
          group_size.data()));
    };
    auto cublas_loop = [&](int64_t i) {
      const float one = 1, zero = 0;
      for (int p = 0; p < count; ++p) {
        CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, ns[p], ms[p],
                          ks[p], &one, at(i, p, 1), ns[p], at(i, p, 0), ks[p],
                          &zero, at(i, p, 2), ns[p]));
      }
    };
    auto ours = [&](int64_t i) {
      CHECK(SgemmGrouped(device_entries + i % sets * group.count, group.count,
                         plan, stream_));
    };
    auto ours_each = [&](int64_t i) {  // one launch a problem
      for (int64_t p = 0; p < group.count; ++p) {
        const GemmShape& s = shapes[p];
        CHECK(Sgemm(s.m, s.n, s.k, at(i, p, 0), at(i, p, 1), at(i, p, 2),
                    stream_));
      }
    };
    // Every C of set 0, in problem order, each poisoned before the run.
    auto outputs = [&](auto run) {
      for (int64_t p = 0; p < group.count; ++p) {
        Poison(at(0, p, 2), shapes[p].m * shapes[p].n, stream_);
      }
      run(0);
      std::vector<float> all = ToHost(buffer.get(), set, stream_);
      std::vector<float> c;
      for (int64_t p = 0; p < group.count; ++p) {
        const float* first = all.data() + offsets[3 * p + 2];
        c.insert(c.end(), first, first + shapes[p].m * shapes[p].n);
      }
      return c;
    };
    const std::vector<float> reference = outputs(cublas_loop);
    const Timing grouped_timing = Time(stream_, cublas_grouped);
    AddSgemmRow("grouped", name, "cublas_grouped",
                RelError(outputs(cublas_grouped), reference), grouped_timing,
                flop, bytes, grouped_timing.median_ms,
                ", " + std::to_string(sets) + " input sets");
    AddSgemmRow("grouped", name, "cublas_loop", 0, Time(stream_, cublas_loop),
                flop, bytes, grouped_timing.median_ms, "");
    AddSgemmRow(
        "grouped", name, "matserve_grouped", RelError(outputs(ours), reference),
        Time(stream_, ours), flop, bytes, grouped_timing.median_ms,
        ", " + std::to_string(plan.blocks) + " blocks of " +
            (plan.warp_tiled
                 ? "64x128 warp tiles, pieces of " + std::to_string(plan.width)
                 : std::string("64x64 small tiles")));
    AddSgemmRow("grouped", name, "matserve_each",
                RelError(outputs(ours_each), reference),
                Time(stream_, ours_each), flop, bytes, grouped_timing.median_ms,
                ", one Sgemm a problem");
  }

  void RunTransposeBatched(const BatchedTransposeShape& shape) {
    const int64_t rows = shape.rows, cols = shape.cols, count = shape.batch;
    const int64_t items = rows * cols;
    const int64_t bytes = count * items * 4;
    const int64_t set = 2 * Aligned(count * items);  // floats: ins, outs
    const int64_t sets = InputSets(2 * bytes, properties_.l2CacheSize);
    DeviceBuffer buffer = AllocateRandom(sets * set, ++seed_, stream_);
    auto in = [&](int64_t i) { return buffer.get() + i % sets * set; };
    auto out = [&](int64_t i) { return in(i) + Aligned(count * items); };
    const std::string name = std::to_string(rows) + "x" + std::to_string(cols) +
                             "/" + std::to_string(count);

    const Timing copy = Time(stream_, [&](int64_t i) {
      CHECK(cudaMemcpyAsync(out(i), in(i), bytes, cudaMemcpyDeviceToDevice,
                            stream_));
    });
    AddTransposeRow("transpose_batched", name, "memcpy_d2d", std::nullopt, copy,
                    copy.median_ms, bytes,
                    ", " + std::to_string(sets) + " input sets");
    const std::vector<float> input = ToHost(in(0), count * items, stream_);
    std::vector<float> expected(count * items);
    for (int64_t t = 0; t < count; ++t) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          expected[t * items + c * rows + r] = input[t * items + r * cols + c];
        }
      }
    }
    for (TransposeVariant variant : kAllBatchedTransposeVariants) {
      auto ours = [&](int64_t i) {
        CHECK(TransposeStridedBatched(rows, cols, in(i), items, out(i), items,
                                      count, stream_, variant));
      };
      const std::vector<float> output =
          Output(out(0), count * items, [&] { ours(0); });
      AddTransposeRow("transpose_batched", name, TransposeVariantName(variant),
                      Mismatches(output, expected), Time(stream_, ours),
                      copy.median_ms, bytes, "");
    }
  }

  // Elements whose bits differ, with the normwise error they add up to.
  struct Mismatch {
    int64_t count = 0;
    double rel_error = 0;
  };
  static Mismatch Mismatches(const std::vector<float>& output,
                             const std::vector<float>& expected) {
    Mismatch mismatch;
    if (std::memcmp(output.data(), expected.data(),
                    expected.size() * sizeof(float)) == 0) {
      return mismatch;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      mismatch.count += std::memcmp(&output[i], &expected[i], 4) != 0;
    }
    mismatch.rel_error = RelError(output, expected);
    return mismatch;
  }

  void AddTransposeRow(const char* kind, const std::string& name,
                       const char* impl, std::optional<Mismatch> mismatch,
                       const Timing& timing, double copy_ms, int64_t bytes,
                       const std::string& extra) {
    const bool wrong = mismatch && mismatch->count > 0;
    std::string note = TimingNote(timing) + extra;
    if (wrong) {
      note = "WRONG (" + std::to_string(mismatch->count) +
             " elements differ); " + note;
    }
    std::optional<double> rel_error;
    if (mismatch) rel_error = mismatch->rel_error;
    // Bytes read plus bytes written, over the time, in GB/s.
    Add({kind, name, impl, timing.median_ms,
         2.0 * bytes / timing.median_ms / 1e6, 100 * copy_ms / timing.median_ms,
         rel_error, note, wrong});
  }

  cudaDeviceProp properties_;
  int clock_khz_ = 0;
  double copy_bandwidth_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  uint64_t seed_ = 0x6d61747365727665ull;  // "matserve"
  std::vector<Row> rows_;
  int wrong_rows_ = 0;
};

}  // namespace
}  // namespace matserve::kernels

int main(int argc, char** argv) {
  using matserve::kernels::KernelBench;
  matserve::kernels::Options options;
  if (!matserve::kernels::ParseOptions(argc, argv, &options)) return 2;
  KernelBench bench;
  bench.PrintHeader();
  bench.RunSgemmTable(options.sgemm);
  bench.RunBatchedTable(options.batched, options.batched_tiles);
  bench.RunGroupedTable(options.grouped);
  bench.RunTransposeTable(options.transpose);
  bench.RunTransposeBatchedTable(options.transpose_batched);
  if (!options.csv_path.empty() && !bench.WriteCsv(options.csv_path)) {
    std::fprintf(stderr, "cannot write %s\n", options.csv_path.c_str());
    return 2;
  }
  if (bench.wrong_rows() > 0) {
    std::printf("\nFAILED: %d row(s) WRONG\n", bench.wrong_rows());
    return 1;
  }
  std::printf("\nall outputs match\n");
  return 0;
}
