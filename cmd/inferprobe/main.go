// Command inferprobe continuously benchmarks LLM inference endpoints and
// exposes the results as Prometheus metrics.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/inferprobe/inferprobe/simulator"
)

const (
	defaultListen          = ":9470"
	defaultSimulatorListen = "127.0.0.1:8000"
)

const appHelp = `Continuous, Prometheus-native benchmarking of LLM inference endpoints.

inferprobe sends low-rate, seeded Poisson probe traffic to OpenAI-compatible
servers (vLLM, SGLang, llama.cpp, TGI, NIM, ...) forever, and exposes time to
first token, inter-token latency, request latency, token counts and errors on
/metrics as Prometheus native histograms.

Start here:
  inferprobe demo                         # simulator + probes, metrics on :9470
  inferprobe check-config scenario.yml    # validate a scenario file
  inferprobe serve --config.file=scenario.yml
`

func main() {
	fillVersion(debug.ReadBuildInfo())
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	app := kingpin.New("inferprobe", appHelp)
	app.Version(version.Print("inferprobe"))
	app.HelpFlag.Short('h')
	logConfig := &promslog.Config{}
	flag.AddFlags(app, logConfig)

	serve := app.Command("serve", "Run the probes of a scenario file and serve /metrics (the default command).").Default()
	serveConfig := serve.Flag("config.file", "Scenario file: targets and probes. See scenarios/example.yml.").
		Default("inferprobe.yml").String()
	serveWeb := kingpinflag.AddFlags(serve, defaultListen)
	serveLifecycle := serve.Flag("web.enable-lifecycle", "Allow POST /-/reload to reload the scenario file (SIGHUP always does).").Bool()
	serveBurstAPI := addBurstAPIFlags(serve)
	serveWorkers := addWorkerFlags(serve, logConfig)
	serveDaemonFlags := addDaemonFlags(serve, true)
	serveGPU := addGPUFlags(serve)

	demo := app.Command("demo", "Run the built-in simulator and a bundled probe scenario against it: a working setup in one command.")
	demoWeb := kingpinflag.AddFlags(demo, defaultListen)
	demoLifecycle := demo.Flag("web.enable-lifecycle", "Allow POST /-/reload.").Bool()
	demoBurstAPI := addBurstAPIFlags(demo)
	demoSimListen := demo.Flag("simulator.listen-address", "Address for the simulator; port 0 picks a free one.").
		Default("127.0.0.1:0").String()
	demoSim := simulator.AddFlags(demo)
	demoWorkers := addWorkerFlags(demo, logConfig)
	demoDaemonFlags := addDaemonFlags(demo, false)
	demoGPU := addGPUFlags(demo)

	simulate := app.Command("simulate", "Run the built-in OpenAI-compatible LLM server simulator (no GPU, no model).")
	simulateWeb := kingpinflag.AddFlags(simulate, defaultSimulatorListen)
	simulateCfg := simulator.AddFlags(simulate)

	bench := app.Command("bench", "Run one finite benchmark with AIPerf's flag names and print a report with exact percentiles and the request sequence's digest. `inferprobe bench merge DIR...` combines the shards of a run sent from several machines (--shard).")
	benchCfg := addBenchFlags(bench, logConfig)
	benchWorkers := addWorkerFlags(bench, logConfig)
	benchGPU := addGPUFlags(bench)
	// `bench merge` is a command of its own: bench takes positional values
	// (AIPerf's lists after a flag), which kingpin cannot mix with subcommands.
	benchMerge := app.Command(benchMergeCommand, "`inferprobe bench merge DIR...`: combine the directories of the shards of one `bench --shard i/n` run into the report and artifacts of the whole run: exact percentiles over every shard's requests, the digest of the run unsharded. Exits 6 when a shard is missing or did not finish.")
	benchMergeFlags := addMergeFlags(benchMerge)

	check := app.Command("check-config", "Validate scenario files; print every problem with file:line and exit 1 if any.")
	checkFiles := check.Arg("file", "Scenario files to check.").Required().Strings()

	worker := app.Command("worker", "Run one worker process; serve and demo start these themselves.").Hidden()

	cmd, err := app.Parse(benchMergeArgs(args))
	if err != nil {
		err = rewordParseError(err, args)
		fmt.Fprintf(os.Stderr, "inferprobe: %v; try --help\n", err)
		return 2
	}
	logger := promslog.New(logConfig)

	switch cmd {
	case serve.FullCommand():
		return runServe(logger, *serveConfig, serveWeb, *serveLifecycle, serveBurstAPI, serveWorkers, serveDaemonFlags, serveGPU)
	case demo.FullCommand():
		return runDemo(logger, demoWeb, *demoLifecycle, demoBurstAPI, *demoSimListen, demoSim, demoWorkers, demoDaemonFlags, demoGPU)
	case simulate.FullCommand():
		return runSimulate(logger, simulateWeb, simulateCfg)
	case benchMerge.FullCommand():
		return runBenchMerge(os.Stdout, os.Stderr, benchMergeFlags, args)
	case bench.FullCommand():
		return runBench(logger, os.Stdout, os.Stderr, benchCfg, benchWorkers, benchGPU)
	case check.FullCommand():
		return runCheckConfig(os.Stdout, os.Stderr, *checkFiles)
	case worker.FullCommand():
		return runWorker(logConfig)
	}
	return 2
}
