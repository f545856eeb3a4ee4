// See fake_compiler.h.
#include "fake_compiler.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

namespace manifold::compiler {
namespace {

constexpr std::string_view kMagic = "FAKEBIN1";

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, fake_compiler::KernelBody>& registry() {
  static std::map<std::string, fake_compiler::KernelBody> r;
  return r;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool has_word(const std::string& text, const std::string& word) {
  size_t pos = 0;
  while ((pos = text.find(word, pos)) != std::string::npos) {
    const bool left = pos == 0 || !(std::isalnum(static_cast<unsigned char>(text[pos - 1])) ||
                                    text[pos - 1] == '_');
    const size_t end = pos + word.size();
    const bool right = end >= text.size() ||
                       !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
    if (left && right) return true;
    pos = end;
  }
  return false;
}

size_t value_size(const std::string& type) {
  static const std::map<std::string, size_t> scalars = {
      {"char", 1}, {"uchar", 1}, {"bool", 1}, {"short", 2}, {"ushort", 2}, {"half", 2},  {"int", 4},
      {"uint", 4}, {"float", 4}, {"long", 8}, {"ulong", 8}, {"double", 8}, {"size_t", 8}};
  std::string base = type;
  size_t lanes = 1;
  while (!base.empty() && std::isdigit(static_cast<unsigned char>(base.back()))) base.pop_back();
  if (base.size() != type.size()) lanes = std::stoul(type.substr(base.size()));
  if (lanes == 3) lanes = 4;
  auto it = scalars.find(base);
  return it == scalars.end() ? 4 : it->second * lanes;
}

KernelArg parse_param(const std::string& text) {
  KernelArg a;
  std::string t = text;
  const size_t space = t.find_last_of(" *");
  a.name = trim(t.substr(space + 1));
  const bool pointer = t.find('*') != std::string::npos;
  if (has_word(t, "__local") || has_word(t, "local")) {
    a.kind = ArgKind::Local;
    a.address = CL_KERNEL_ARG_ADDRESS_LOCAL;
    a.size = sizeof(void*);
  } else if (has_word(t, "__constant") || has_word(t, "constant")) {
    a.kind = ArgKind::Buffer;
    a.address = CL_KERNEL_ARG_ADDRESS_CONSTANT;
    a.size = sizeof(void*);
  } else if (pointer) {
    a.kind = ArgKind::Buffer;
    a.address = CL_KERNEL_ARG_ADDRESS_GLOBAL;
    a.size = sizeof(void*);
  } else if (has_word(t, "sampler_t")) {
    a.kind = ArgKind::Sampler;
    a.size = sizeof(void*);
  } else if (t.find("image") != std::string::npos) {
    a.kind = ArgKind::Image;
    a.size = sizeof(void*);
    a.access = CL_KERNEL_ARG_ACCESS_READ_ONLY;
  } else {
    a.kind = ArgKind::Value;
    std::istringstream words(t.substr(0, space));
    std::string w, last;
    while (words >> w)
      if (w != "const" && w != "__private" && w != "private") last = w;
    if (last == "unsigned") last = "uint";
    a.size = value_size(last);
    a.type_name = last;
  }
  if (a.type_name.empty()) {
    std::istringstream words(t.substr(0, t.find('*') == std::string::npos ? space : t.find('*')));
    std::string w, last;
    while (words >> w)
      if (w.rfind("__", 0) != 0 && w != "global" && w != "local" && w != "constant" &&
          w != "const" && w != "restrict" && w != "volatile")
        last = w;
    a.type_name = last + (pointer ? "*" : "");
  }
  if (has_word(t, "const") && pointer) a.type_qualifier |= CL_KERNEL_ARG_TYPE_CONST;
  if (a.address == CL_KERNEL_ARG_ADDRESS_CONSTANT) a.type_qualifier |= CL_KERNEL_ARG_TYPE_CONST;
  return a;
}

std::vector<KernelInfo> parse_kernels(const std::string& source, bool arg_info) {
  static const std::regex kernel_re(
      R"((?:^|[^\w])(?:__)?kernel\s+(?:__attribute__\(\((.*?)\)\)\s+)?void\s+(\w+)\s*\(([^)]*)\))");
  std::vector<KernelInfo> kernels;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), kernel_re);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    KernelInfo info;
    info.name = m[2].str();
    const std::string attributes = m[1].str();
    const size_t reqd = attributes.find("reqd_work_group_size(");
    if (reqd != std::string::npos) {
      std::istringstream in(attributes.substr(reqd + 21));
      char comma;
      in >> info.reqd_work_group_size[0] >> comma >> info.reqd_work_group_size[1] >> comma >>
          info.reqd_work_group_size[2];
      info.attributes = "reqd_work_group_size(" + std::to_string(info.reqd_work_group_size[0]) +
                        "," + std::to_string(info.reqd_work_group_size[1]) + "," +
                        std::to_string(info.reqd_work_group_size[2]) + ")";
    }
    std::string current;
    for (char c : m[3].str() + ",") {
      if (c == ',') {
        const std::string param = trim(current);
        if (!param.empty() && param != "void") info.args.push_back(parse_param(param));
        current.clear();
      } else {
        current += c;
      }
    }
    // Each `__local` declaration in the body counts as 64 bytes of static local memory.
    const size_t body_start = static_cast<size_t>(m.position(0) + m.length(0));
    const size_t body_end = source.find("\n}", body_start);
    const std::string body = source.substr(
        body_start, body_end == std::string::npos ? std::string::npos : body_end - body_start);
    for (size_t l = 0; (l = body.find("__local ", l)) != std::string::npos; l += 8)
      info.local_mem_size += 64;
    info.private_mem_size = 16;
    info.arg_info_available = arg_info;
    kernels.push_back(std::move(info));
  }
  return kernels;
}

std::vector<uint8_t> encode(BinaryType type, std::string_view options, std::string_view triple,
                            std::string_view source) {
  std::string text(kMagic);
  text += '\n';
  text += std::to_string(static_cast<int>(type)) + '\n';
  text += std::string(options) + '\n';
  text += std::string(triple) + '\n';
  text += source;
  return {text.begin(), text.end()};
}

struct Decoded {
  BinaryType type;
  std::string options, triple, source;
};

std::optional<Decoded> decode(std::span<const uint8_t> binary) {
  std::string text(binary.begin(), binary.end());
  if (text.rfind(std::string(kMagic) + "\n", 0) != 0) return std::nullopt;
  std::istringstream in(text.substr(kMagic.size() + 1));
  Decoded d;
  std::string type;
  if (!std::getline(in, type) || !std::getline(in, d.options) || !std::getline(in, d.triple))
    return std::nullopt;
  if (type.size() != 1 || type[0] < '0' || type[0] > '3') return std::nullopt;
  d.type = static_cast<BinaryType>(type[0] - '0');
  std::ostringstream rest;
  rest << in.rdbuf();
  d.source = rest.str();
  return d;
}

bool wants_arg_info(std::string_view options) {
  return options.find("-cl-kernel-arg-info") != std::string_view::npos;
}

BuildOutput compile_source(std::string_view source, std::string_view options,
                           const std::vector<std::pair<std::string, std::string>>& headers,
                           const Target& target, BinaryType type) {
  BuildOutput out;
  std::string text(source);
  // #include "name": embedded headers first.
  size_t inc;
  while ((inc = text.find("#include \"")) != std::string::npos) {
    const size_t end = text.find('"', inc + 10);
    const std::string name = text.substr(inc + 10, end - inc - 10);
    auto h = std::find_if(headers.begin(), headers.end(), [&](auto& e) { return e.first == name; });
    if (h == headers.end()) {
      out.log = "fatal error: '" + name + "' file not found";
      return out;
    }
    text.replace(inc, end + 1 - inc, h->second);
  }
  if (text.find("badcodehere") != std::string::npos) {
    out.log = "error: use of undeclared identifier 'badcodehere'";
    return out;
  }
  out.success = true;
  out.type = type;
  out.kernels = parse_kernels(text, wants_arg_info(options));
  out.binary = encode(type, options, target.triple, text);
  return out;
}

}  // namespace

Target host_cpu_target() {
  Target t;
  t.triple = "x86_64-pc-linux-gnu";
  t.features = "+avx2,+fma";
  t.opencl_c_features = {"__opencl_c_int64", "__opencl_c_atomic_order_acq_rel"};
  t.extensions = {"cl_khr_fp64", "cl_khr_int64_base_atomics"};
  return t;
}

BuildOutput build(std::string_view source, std::string_view options, const Target& target) {
  return compile_source(source, options, {}, target, BinaryType::Executable);
}

BuildOutput compile(std::string_view source, std::string_view options,
                    const std::vector<std::pair<std::string, std::string>>& headers,
                    const Target& target) {
  return compile_source(source, options, headers, target, BinaryType::CompiledObject);
}

BuildOutput link(const std::vector<std::span<const uint8_t>>& objects, std::string_view options,
                 const Target& target) {
  BuildOutput out;
  std::string source;
  bool arg_info = false;
  for (auto object : objects) {
    auto d = decode(object);
    if (!d || d->type == BinaryType::None || d->type == BinaryType::Executable) {
      out.log = "error: an input is not a compiled object or library";
      return out;
    }
    source += d->source + "\n";
    arg_info = arg_info || wants_arg_info(d->options);
  }
  const bool library = options.find("-create-library") != std::string_view::npos;
  out.success = true;
  out.type = library ? BinaryType::Library : BinaryType::Executable;
  out.kernels = parse_kernels(source, arg_info);
  out.binary = encode(out.type, options, target.triple, source);
  return out;
}

bool options_valid(std::string_view options, OptionsKind kind, std::string* why) {
  std::istringstream in{std::string(options)};
  std::string token;
  bool expect_argument = false;
  while (in >> token) {
    if (expect_argument) {
      expect_argument = false;
      continue;
    }
    if (token == "-D" || token == "-I") {
      expect_argument = true;
      continue;
    }
    const bool link_only = token == "-create-library" || token == "-enable-link-options";
    const bool both = token == "-cl-denorms-are-zero" || token == "-cl-no-signed-zeros" ||
                      token == "-cl-unsafe-math-optimizations" || token == "-cl-finite-math-only" ||
                      token == "-cl-fast-relaxed-math" || token == "-cl-no-subgroup-ifp";
    const bool compile_only = token.rfind("-D", 0) == 0 || token.rfind("-I", 0) == 0 ||
                              token.rfind("-cl-std=", 0) == 0 || token == "-w" ||
                              token == "-Werror" || token == "-cl-opt-disable" ||
                              token == "-cl-mad-enable" || token == "-cl-kernel-arg-info" ||
                              token == "-cl-uniform-work-group-size" ||
                              token == "-cl-single-precision-constant" || token == "-g";
    bool ok = both || (kind == OptionsKind::Link ? link_only : compile_only);
    if (kind == OptionsKind::Build) ok = both || compile_only;
    if (!ok) {
      if (why) *why = "unknown option " + token;
      return false;
    }
  }
  return true;
}

bool options_valid(std::string_view options, std::string* why) {
  return options_valid(options, OptionsKind::Build, why) ||
         options_valid(options, OptionsKind::Link, why);
}

size_t global_variables_size(std::span<const uint8_t>) { return 0; }

// The fake compiler takes no IL (its target reports none).
const std::string& producer_id() {
  static const std::string id = "fake compiler";
  return id;
}

bool il_valid(std::span<const uint8_t>, std::string* why) {
  *why = "the fake compiler takes no IL";
  return false;
}
std::map<uint32_t, size_t> il_spec_constants(std::span<const uint8_t>) { return {}; }
BuildOutput build_il(std::span<const uint8_t>, std::string_view, const Target&,
                     const SpecConstantValues&) {
  return BuildOutput{};
}
BuildOutput compile_il(std::span<const uint8_t>, std::string_view, const Target&,
                       const SpecConstantValues&) {
  return BuildOutput{};
}

std::optional<BinaryInfo> inspect_binary(std::span<const uint8_t> binary, std::string* error) {
  auto d = decode(binary);
  if (!d) {
    if (error) *error = "not a fake-compiler binary";
    return std::nullopt;
  }
  BinaryInfo info;
  info.type = d->type;
  info.options = d->options;
  info.triple = d->triple;
  info.kernels = parse_kernels(d->source, wants_arg_info(d->options));
  return info;
}

}  // namespace manifold::compiler

namespace manifold::cpu {

class CpuExecutable::Impl {
 public:
  std::vector<compiler::KernelInfo> kernels;
};

CpuExecutable::CpuExecutable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CpuExecutable::~CpuExecutable() = default;

std::unique_ptr<CpuExecutable> CpuExecutable::load(std::span<const uint8_t> binary,
                                                   const compiler::Target& target,
                                                   std::string* error) {
  auto d = compiler::decode(binary);
  if (!d || d->type != compiler::BinaryType::Executable || d->triple != target.triple) {
    if (error) *error = "not an executable for this target";
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->kernels = compiler::parse_kernels(d->source, compiler::wants_arg_info(d->options));
  return std::unique_ptr<CpuExecutable>(new CpuExecutable(std::move(impl)));
}

const compiler::KernelInfo* CpuExecutable::find(std::string_view name) const {
  for (const compiler::KernelInfo& k : impl_->kernels)
    if (k.name == name) return &k;
  return nullptr;
}

const std::vector<compiler::KernelInfo>& CpuExecutable::kernels() const { return impl_->kernels; }

void CpuExecutable::run(std::string_view kernel, const compiler::NDRange& range,
                        const void* const* arg_values, const size_t* local_sizes,
                        compiler::PrintfBuffer*) const {
  fake_compiler::KernelBody body;
  {
    std::lock_guard lock(compiler::registry_mutex());
    auto it = compiler::registry().find(std::string(kernel));
    if (it == compiler::registry().end()) return;
    body = it->second;
  }
  // The body covers the groups the range selects (NDRange::launch_first/launch_end).
  body(range, arg_values, local_sizes);
}

}  // namespace manifold::cpu

namespace manifold::fake_compiler {

void define_kernel(const std::string& name, KernelBody body) {
  std::lock_guard lock(compiler::registry_mutex());
  compiler::registry()[name] = std::move(body);
}

void clear_kernels() {
  std::lock_guard lock(compiler::registry_mutex());
  compiler::registry().clear();
}

}  // namespace manifold::fake_compiler
