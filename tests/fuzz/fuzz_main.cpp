// ms_bcewl_fuzz: seeded random calls of the aclnn BCEWithLogits API of libms_bcewl.so (what a case does:
// fuzz_case.h). Built by aclnn_adapter/ with -DMS_BCEWL_BUILD_TESTS=ON, preferably with -DMS_BCEWL_SANITIZE=ON.
//
//   ms_bcewl_fuzz [--regressions] [--seed N] [--iterations N] [--seconds S] [--case N] [--case-timeout S]
//
// Runs the regression cases of the bugs found so far (--regressions, regressions.h), case --case N of the seed
// (to replay a finding), and cases 0, 1, 2, ... of the seed (default 1) until --iterations cases or --seconds
// seconds, whichever comes first (default, unless one of the first two is asked for: 1000 cases). A case that runs
// longer than --case-timeout seconds (default 60) is reported as a hang and ends the program with status 3.
// Findings are printed as they occur, then the calls by function and status, the output elements compared with the
// reference and the fused operations' runs compared bit for bit, by operation; the last line is the summary:
//   fuzz summary: seed=1 cases=... calls=... statuses=0:...,161001:...,161002:... elements_compared=...
//   runs_not_compared=... mismatches=0 unexpected=0 seconds=...
// The exit status is 0 only if there was no mismatch and no unexpected status.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "fuzz_case.h"
#include "regressions.h"

namespace {

struct Options {
  uint64_t seed = 1;
  uint64_t iterations = 0;
  double seconds = 0;
  long long only_case = -1;
  unsigned case_timeout = 60;
  bool regressions = false;
};

// The options that take a value, and where each puts it.
struct ValueOption {
  const char *name;
  void (*set)(const char *value, Options *options);
};

const ValueOption kValueOptions[] = {
    {"--seed", [](const char *value, Options *options) { options->seed = std::strtoull(value, nullptr, 10); }},
    {"--iterations",
     [](const char *value, Options *options) { options->iterations = std::strtoull(value, nullptr, 10); }},
    {"--seconds", [](const char *value, Options *options) { options->seconds = std::strtod(value, nullptr); }},
    {"--case", [](const char *value, Options *options) { options->only_case = std::strtoll(value, nullptr, 10); }},
    {"--case-timeout",
     [](const char *value, Options *options) {
       options->case_timeout = static_cast<unsigned>(std::strtoul(value, nullptr, 10));
     }},
};

// Returns false for a name that is not an option with a value.
bool SetValueOption(const std::string &name, const char *value, Options *options) {
  for (const ValueOption &option : kValueOptions) {
    if (name == option.name) {
      option.set(value, options);
      return true;
    }
  }
  return false;
}

bool ParseOptions(int argc, char **argv, Options *options) {
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (name == "--regressions") {
      options->regressions = true;
      continue;
    }
    if (i + 1 == argc || !SetValueOption(name, argv[++i], options)) {
      return false;
    }
  }
  // Without a limit, a campaign of 1000 cases, unless the regressions or one case were asked for instead.
  if (options->iterations == 0 && options->seconds <= 0) {
    options->iterations = options->regressions || options->only_case >= 0 ? 0 : 1000;
  }
  return true;
}

// What the watchdog prints; written before each case, because a signal handler may not format.
char hang_message[160];

void ReportHang(int) {
  (void)!write(STDOUT_FILENO, hang_message, std::strlen(hang_message));
  _exit(3);
}

void ArmWatchdog(const Options &options, uint64_t index) {
  std::snprintf(hang_message, sizeof(hang_message), "HANG: case %llu of seed %llu ran longer than %u s\n",
                static_cast<unsigned long long>(index), static_cast<unsigned long long>(options.seed),
                options.case_timeout);
  alarm(options.case_timeout);
}

std::string KeyText(int status) { return std::to_string(status); }
std::string KeyText(const std::string &name) { return name; }

// key:count,key:count,...
template <typename Key>
std::string CountsText(const std::map<Key, uint64_t> &counts) {
  std::string text;
  for (const auto &[key, count] : counts) {
    text += (text.empty() ? "" : ",") + KeyText(key) + ":" + std::to_string(count);
  }
  return text;
}

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Whether the campaign runs case `index`: there is a campaign, and neither of its limits is reached.
bool CampaignGoesOn(const Options &options, uint64_t index, Clock::time_point start) {
  const bool campaign = options.iterations > 0 || options.seconds > 0;
  const bool enough_cases = options.iterations > 0 && index >= options.iterations;
  return campaign && !enough_cases && !(options.seconds > 0 && SecondsSince(start) >= options.seconds);
}

// The regressions, the one case and the campaign that options ask for, each case under the watchdog.
void RunCases(const Options &options, Clock::time_point start, fuzz::Stats *stats) {
  if (options.regressions) {
    fuzz::RunRegressions(stats);
  }
  if (options.only_case >= 0) {
    ArmWatchdog(options, static_cast<uint64_t>(options.only_case));
    fuzz::RunCase(options.seed, static_cast<uint64_t>(options.only_case), stats);
  }
  for (uint64_t index = 0; CampaignGoesOn(options, index, start); ++index) {
    ArmWatchdog(options, index);
    fuzz::RunCase(options.seed, index, stats);
  }
  alarm(0);
}

void PrintStats(const Options &options, const fuzz::Stats &stats, double seconds) {
  for (const auto &[api, statuses] : stats.statuses_by_api) {
    std::printf("  %-68s %s\n", api.c_str(), CountsText(statuses).c_str());
  }
  std::printf("  elements compared with the reference, by operation: %s\n",
              CountsText(stats.elements_compared_by_op).c_str());
  std::printf("  fused operations' runs compared bit for bit with separate calls: %s\n",
              CountsText(stats.runs_compared_bitwise_by_op).c_str());
  std::printf("  random cases by ISA kernel: %s\n", CountsText(stats.cases_by_isa).c_str());
  std::printf(
      "fuzz summary: seed=%llu cases=%llu calls=%llu statuses=%s elements_compared=%llu runs_not_compared=%llu "
      "mismatches=%llu unexpected=%llu seconds=%.1f\n",
      static_cast<unsigned long long>(options.seed), static_cast<unsigned long long>(stats.cases),
      static_cast<unsigned long long>(stats.calls), CountsText(stats.statuses).c_str(),
      static_cast<unsigned long long>(stats.elements_compared),
      static_cast<unsigned long long>(stats.runs_not_compared), static_cast<unsigned long long>(stats.mismatches),
      static_cast<unsigned long long>(stats.unexpected), seconds);
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: %s [--regressions] [--seed N] [--iterations N] [--seconds S] [--case N] [--case-timeout S]\n",
                 argv[0]);
    return 2;
  }
  std::signal(SIGALRM, ReportHang);
  fuzz::Stats stats;
  const Clock::time_point start = Clock::now();
  RunCases(options, start, &stats);
  PrintStats(options, stats, SecondsSince(start));
  return stats.mismatches == 0 && stats.unexpected == 0 ? 0 : 1;
}
