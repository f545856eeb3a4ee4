// The scheduler's soak-and-fault campaign: rounds of random DAGs (fault_campaign_round.cpp) over
// every device of one context (the CPU, two emulated GPUs, and the simulated CUDA driver's or the
// Level Zero test driver's GPU where ctest selects them), with faults injected at random: user
// events set to a negative status, launches and device allocations the test drivers refuse,
// events, buffers, queues and kernels released while commands use them, and, on the Level Zero
// test driver, a device lost at the end. Every command's status, every read and every buffer on
// every device are checked against the DAG's sequential model.
//
// Arguments (after GoogleTest's own):
//   --seed=N      the campaign's seed (default: drawn from the clock; printed first, either way)
//   --round=R     only round R of that seed (a failure names its round)
//   --commands=N  stop after about N commands (default: a CI budget, smaller under sanitizers)
//   --seconds=S   stop starting rounds after S seconds of wall-clock time
//   --minutes=M   the long run: M tests of a minute each, no command budget
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "fault_campaign.h"

namespace {

using namespace schedtest;

struct Options {
  uint64_t seed = 0;
  long round = -1;
  long commands = kSanitized ? 30000 : 100000;
  double seconds = kSanitized ? 45 : 20;
  long minutes = 0;
};
Options g_options;
CampaignFigures g_total;  // over every test of the process
long g_next_round = 0;

bool parseArgument(const char* arg) {
  auto value = [&](const char* name, auto* out) {
    const size_t n = std::strlen(name);
    if (std::strncmp(arg, name, n) != 0) return false;
    char* end = nullptr;
    const double v = std::strtod(arg + n, &end);
    if (end == arg + n || *end) return false;
    *out = static_cast<std::remove_pointer_t<decltype(out)>>(v);
    return true;
  };
  if (std::strncmp(arg, "--seed=", 7) == 0) {
    char* end = nullptr;
    g_options.seed = std::strtoull(arg + 7, &end, 0);
    return end != arg + 7 && !*end;
  }
  return value("--round=", &g_options.round) || value("--commands=", &g_options.commands) ||
         value("--seconds=", &g_options.seconds) || value("--minutes=", &g_options.minutes);
}

// Devices of the context, what each can be asked, and three queues on each: in-order,
// out-of-order (where the device has it) and in-order with profiling.
class FaultCampaign : public MultiDeviceTest {
 public:
  FaultCampaign(bool first, bool last, double seconds, long commands)
      : first_(first), last_(last), seconds_(seconds), commands_(commands) {}

  void TestBody() override {
    if (first_)
      std::printf("campaign seed %" PRIu64 ": rerun with --seed=%" PRIu64 "\n", g_options.seed,
                  g_options.seed);
    std::fflush(stdout);
    Program program = build(kCampaignSource);
    ASSERT_FALSE(HasFailure());
    CampaignEnv env;
    env.context = context_;
    env.program = program;
    env.hooks = findFaultHooks();
    for (cl_device_id d : devices_) {
      CampaignDevice cd;
      cd.id = d;
      cd.name = deviceName(d);
      cd.computes = !kernelsComputeNothing(d);
      cd.null_cuda = !cd.computes;
      cd.level_zero = cd.name.find("Level Zero") != std::string::npos;
      const int device = static_cast<int>(env.devices.size());
      const cl_command_queue_properties ooo =
          supportsOutOfOrder(d) ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0;
      for (cl_command_queue_properties props :
           {cl_command_queue_properties{0}, ooo,
            cl_command_queue_properties{CL_QUEUE_PROFILING_ENABLE}}) {
        cd.queues.push_back(static_cast<int>(env.queues.size()));
        env.queues.push_back({makeQueue(d, props), device, props,
                              (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) == 0});
        ASSERT_TRUE(env.queues.back().queue);
      }
      if (first_)
        std::printf("campaign device '%s'%s%s\n", cd.name.c_str(),
                    cd.null_cuda ? " (launch and allocation faults)" : "",
                    cd.level_zero ? " (allocation faults, lost at the end)" : "");
      env.devices.push_back(std::move(cd));
    }
    // Where ctest selects a test driver, its device and its fault controls must be there.
    auto has = [&](bool CampaignDevice::*what) {
      return std::any_of(env.devices.begin(), env.devices.end(),
                         [&](const CampaignDevice& d) { return d.*what; });
    };
    if (std::getenv("MANIFOLD_CUDA_DRIVER")) {
      ASSERT_TRUE(env.hooks.cuda_fail_launches && env.hooks.cuda_fail_allocations)
          << "the simulated CUDA driver's fault controls";
      ASSERT_TRUE(has(&CampaignDevice::null_cuda)) << "no device of the simulated CUDA driver";
    }
    if (std::getenv("ZE_ENABLE_ALT_DRIVERS")) {
      ASSERT_TRUE(env.hooks.ze_inject) << "the Level Zero test driver's fault controls";
      ASSERT_TRUE(has(&CampaignDevice::level_zero)) << "no device of the Level Zero test driver";
    }
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    const long first_round = g_options.round >= 0 ? g_options.round : g_next_round;
    for (long r = first_round;; ++r) {
      if (g_options.round >= 0 && r != g_options.round) break;
      if (g_options.round < 0 && (env.figures.commands >= commands_ || elapsed() >= seconds_))
        break;
      // Rounds of 100 to 400 commands, the size drawn from the seed and the round alone.
      std::mt19937_64 size_rng(g_options.seed ^ (static_cast<uint64_t>(r) << 32));
      const int commands = 100 + static_cast<int>(size_rng() % 301);
      runCampaignRound(env, g_options.seed, r, commands);
      g_next_round = r + 1;
      if (HasFailure()) {
        std::printf("campaign seed %" PRIu64 " failed in round %ld: rerun with --seed=%" PRIu64
                    " --round=%ld\n",
                    g_options.seed, r, g_options.seed, r);
        break;
      }
    }
    const bool lose = last_ && !HasFailure() && g_options.round < 0 && env.hooks.ze_inject;
    if (lose) runDeviceLoss(env, g_options.seed);
    CampaignFigures& t = g_total;
    const CampaignFigures& f = env.figures;
    t.rounds += f.rounds;
    t.commands += f.commands;
    t.user_failures += f.user_failures;
    t.launch_faults += f.launch_faults;
    t.alloc_faults += f.alloc_faults;
    t.device_losses += f.device_losses;
    t.releases += f.releases;
    t.kernel_releases += f.kernel_releases;
    t.bytes_checked += f.bytes_checked;
    std::printf("campaign seed %" PRIu64
                ": %ld rounds, %ld commands run, %ld faults injected (%ld user events failed, %ld "
                "launches and %ld allocations refused, %ld devices lost, %ld objects released in "
                "use; %ld kernels released with their launch pending), %" PRIu64
                " bytes checked%s\n",
                g_options.seed, t.rounds, t.commands, t.faults(), t.user_failures, t.launch_faults,
                t.alloc_faults, t.device_losses, t.releases, t.kernel_releases, t.bytes_checked,
                HasFailure() ? "" : ", none wrong");
  }

 private:
  bool first_, last_;
  double seconds_;
  long commands_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  g_options.seed =
      static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
      1000000000000ull;
  for (int i = 1; i < argc; ++i)
    if (!parseArgument(argv[i])) {
      std::fprintf(stderr, "unknown argument '%s' (see the top of fault_campaign_test.cpp)\n",
                   argv[i]);
      return 2;
    }
  // The long run is a test per minute: each stays within the per-test watchdog (cl_test.h).
  const long slices = std::max<long>(1, g_options.minutes);
  for (long s = 0; s < slices; ++s) {
    const bool first = s == 0, last = s == slices - 1;
    const double seconds = g_options.minutes > 0 ? 60.0 : g_options.seconds;
    const long commands = g_options.minutes > 0 ? LONG_MAX : g_options.commands;
    const std::string name = g_options.minutes > 0 ? "Minute" + std::to_string(s + 1) : "Run";
    ::testing::RegisterTest(
        "FaultCampaign", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
        [=]() -> ::testing::Test* { return new FaultCampaign(first, last, seconds, commands); });
  }
  return RUN_ALL_TESTS();
}
