//===- OptionsTest.cpp ----------------------------------------------------===//
#include "pipecc/Runtime/Options.h"
#include "TestUtil.h"

#include <vector>

using namespace pipecc::rt;

namespace {

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "rank0");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  return parseOptions(static_cast<int>(argv.size()), argv.data());
}

TEST(Options, Defaults) {
  Options options = parse({});
  EXPECT_EQ(options.steps, 1);
  EXPECT_FALSE(options.synthetic);
  EXPECT_TRUE(options.weightsPath.empty());
  EXPECT_FALSE(options.learningRate.has_value());
  EXPECT_FALSE(options.quiet);
}

TEST(Options, ParsesEveryOption) {
  Options options =
      parse({"--steps", "5", "--data=/d", "--weights", "w{rank}.st",
             "--lr", "0.01", "--dump-grads", "g.st", "--save=s.st",
             "--quiet", "--timers"});
  EXPECT_EQ(options.steps, 5);
  EXPECT_EQ(options.dataDir, "/d");
  EXPECT_EQ(options.weightsPath, "w{rank}.st");
  EXPECT_FLOAT_EQ(*options.learningRate, 0.01f);
  EXPECT_EQ(options.dumpGradsPath, "g.st");
  EXPECT_EQ(options.savePath, "s.st");
  EXPECT_TRUE(options.quiet);
  EXPECT_TRUE(options.timers);
  EXPECT_TRUE(parse({"--synthetic"}).synthetic);
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_EQ(parse({"--outputs", "results"}).outputsDir, "results");
}

TEST(Options, PinRanks) {
  EXPECT_TRUE(parse({}).pinRanks);
  EXPECT_TRUE(parse({"--pin-ranks", "auto"}).pinRanks);
  EXPECT_FALSE(parse({"--pin-ranks=off"}).pinRanks);
  EXPECT_RUNTIME_ERROR(parse({"--pin-ranks", "on"}),
                       "--pin-ranks: unknown mode 'on'");
}

TEST(Options, TransportAndMemory) {
  EXPECT_TRUE(parse({"--memory"}).memory);
  EXPECT_EQ(parse({"--transport", "socket"}).transport, "socket");
  EXPECT_EQ(parse({"--transport=mpi"}).transport, "mpi");
  EXPECT_RUNTIME_ERROR(parse({"--transport", "tcp"}),
                       "--transport: unknown transport 'tcp'");
  // Read before the transport starts, so before parseOptions.
  std::vector<std::string> args = {"rank0", "--steps", "2", "--transport",
                                   "mpi", "--transport=socket"};
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  EXPECT_EQ(findTransportOption(static_cast<int>(argv.size()), argv.data()),
            "socket");
  EXPECT_EQ(findTransportOption(3, argv.data()), "");
}

TEST(Options, RejectsBadArguments) {
  EXPECT_RUNTIME_ERROR(parse({"--stepz", "3"}), "unknown option '--stepz'");
  EXPECT_RUNTIME_ERROR(parse({"--steps"}), "--steps needs a value");
  EXPECT_RUNTIME_ERROR(parse({"--steps", "-1"}),
                       "--steps '-1': expected an integer from 0 to");
  EXPECT_RUNTIME_ERROR(parse({"--steps", "3x"}),
                       "--steps '3x': expected a decimal integer");
  EXPECT_RUNTIME_ERROR(parse({"--lr", "fast"}),
                       "--lr 'fast': expected a decimal number");
  // The same parser as pipecc's: no silent zero, overflow or hexadecimal.
  EXPECT_RUNTIME_ERROR(parse({"--lr", "0"}), "--lr '0': the learning rate "
                                             "must be positive");
  EXPECT_RUNTIME_ERROR(parse({"--lr", "-0"}), "must be positive");
  EXPECT_RUNTIME_ERROR(parse({"--lr", "0x10"}), "expected a decimal number");
  EXPECT_RUNTIME_ERROR(parse({"--lr", "1e39"}), "too large for float32");
  EXPECT_RUNTIME_ERROR(parse({"--lr", "1e-50"}), "too small for float32");
  EXPECT_RUNTIME_ERROR(parse({"--lr", "1e-300"}), "too small for float32");
  EXPECT_RUNTIME_ERROR(parse({"--quiet=yes"}), "takes no value");
  EXPECT_RUNTIME_ERROR(parse({"--data", "d", "--synthetic"}),
                       "exclude each other");
  EXPECT_RUNTIME_ERROR(parse({"--steps", "0", "--dump-grads", "g"}),
                       "at least one step");
  EXPECT_RUNTIME_ERROR(parse({"stray"}), "unknown option 'stray'");
}

TEST(Options, BlasThreads) {
  EXPECT_EQ(parse({}).threads, 1); // one thread per rank unless asked
  EXPECT_FALSE(parse({}).blas);
  EXPECT_EQ(parse({"--threads", "4"}).threads, 4);
  EXPECT_EQ(parse({"--threads=64"}).threads, 64);
  EXPECT_TRUE(parse({"--blas"}).blas);
  EXPECT_RUNTIME_ERROR(parse({"--threads", "0"}),
                       "--threads '0': expected an integer from 1 to 64");
  EXPECT_RUNTIME_ERROR(parse({"--threads", "65"}),
                       "expected an integer from 1 to 64");
  EXPECT_RUNTIME_ERROR(parse({"--threads", "two"}),
                       "--threads 'two': expected a decimal integer");
  EXPECT_RUNTIME_ERROR(parse({"--threads"}), "--threads needs a value");
  EXPECT_RUNTIME_ERROR(parse({"--blas=yes"}), "takes no value");
}

TEST(Options, SubstitutesRank) {
  EXPECT_EQ(substituteRank("a/{rank}/rank{rank}.st", 12), "a/12/rank12.st");
  EXPECT_EQ(substituteRank("plain.st", 3), "plain.st");
}

TEST(Options, Trace) {
  Options options = parse({"--steps", "3", "--trace", "t.json"});
  EXPECT_EQ(options.tracePath, "t.json");
  EXPECT_EQ(options.traceStep, 0); // the last step
  options = parse({"--steps", "3", "--trace=t.json", "--trace-step", "2"});
  EXPECT_EQ(options.traceStep, 2);
  EXPECT_RUNTIME_ERROR(parse({"--trace-step", "1"}),
                       "--trace-step needs --trace FILE");
  EXPECT_RUNTIME_ERROR(parse({"--trace", "t", "--trace-step", "0"}),
                       "--trace-step: steps count from 1");
  EXPECT_RUNTIME_ERROR(
      parse({"--steps", "2", "--trace", "t", "--trace-step", "3"}),
      "--trace-step 3: the run has only 2 steps");
  EXPECT_RUNTIME_ERROR(parse({"--steps", "0", "--trace", "t"}),
                       "--trace needs at least one step");
}

} // namespace
