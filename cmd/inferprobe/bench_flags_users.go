package main

import (
	"errors"
	"fmt"

	"github.com/alecthomas/kingpin/v2"

	"github.com/inferprobe/inferprobe/scenarios"
)

// userFlags are AIPerf's user-centric rate options: pattern user_centric.
type userFlags struct {
	rate  float64
	users int
	set   map[string]*bool
}

func addUserFlags(f *benchFlags, flag func(name, help string) *kingpin.FlagClause) *userFlags {
	u := &userFlags{set: f.set}
	flag("user-centric-rate", "Requests per second shared by --num-users users, each sending a synthetic conversation (--session-turns-mean ≥ 2) a turn every num-users/rate seconds after its last was due, a new user taking each finished one's place, as AIPerf's user-centric rate. Instead of --request-rate.").Float64Var(&u.rate)
	flag("num-users", "Users of --user-centric-rate; the run starts with them at spread stages of their conversations.").SetValue(whole("num-users", &u.users, &scenarios.ConcurrencyBound))
	return u
}

func (u *userFlags) given() bool { return *u.set["user-centric-rate"] }

// arrival sets a to the user-centric rate, with AIPerf's checks and its
// words where it has them.
func (u *userFlags) arrival(f *benchFlags, b *benchScenario, a *scenarios.Arrival) error {
	if !u.given() {
		if *u.set["num-users"] {
			//lint:ignore ST1005 AIPerf's own words, for scripts that match them
			return errors.New("--num-users requires --user-centric-rate. Pass --user-centric-rate to enable user-centric mode, or drop --num-users to use the default concurrency/rate timing mode.")
		}
		return nil
	}
	switch {
	case f.fixedSchedule:
		return errors.New("--fixed-schedule cannot be combined with rate-control CLI flags: user_centric_rate")
	case *f.set["request-rate-series"]:
		//lint:ignore ST1005 AIPerf's own words, for scripts that match them
		return errors.New("--request-rate-series is not supported with --user-centric-rate.")
	case *f.set["request-rate"]:
		return errors.New("--request-rate and --user-centric-rate both set the rate; keep one")
	case *f.set["arrival-pattern"] || *f.set["arrival-smoothness"]:
		return errors.New("--user-centric-rate spaces each user's turns evenly and has no arrival pattern; drop --arrival-pattern and --arrival-smoothness")
	case *f.set["request-rate-ramp-duration"]:
		return errors.New("--request-rate-ramp-duration is not supported with --user-centric-rate here; its users share a steady rate")
	case f.inputFile != "":
		return errors.New("--user-centric-rate sends synthetic conversations here; drop --input-file, or replay the file with --request-rate")
	case !(u.rate > 0):
		return fmt.Errorf("--user-centric-rate %g: must be requests per second > 0", u.rate)
	case !*u.set["num-users"] || u.users < 1:
		return errors.New("--user-centric-rate requires --num-users (the users sharing the rate, ≥ 1)")
	case !(f.workload.turnMean >= 2):
		//lint:ignore ST1005 AIPerf's own words, for scripts that match them
		return errors.New("User-centric rate mode requires --session-turns-mean >= 2. For single-turn workloads, use --request-rate instead.")
	case *f.set["request-count"] && f.requestCount < u.users:
		//lint:ignore ST1005 AIPerf's own words, for scripts that match them
		return fmt.Errorf("Phase 'profiling': --request-count (%d) must be >= --num-users (%d). Each user needs at least one request.", f.requestCount, u.users)
	case f.workload.given(conversationFlags...):
		return errors.New("--num-sessions is not supported with --user-centric-rate here (its users' first conversations are cut short); give --request-count or --benchmark-duration")
	}
	const path = benchProbe + ".arrival"
	a.Pattern, a.Rate, a.Users = scenarios.ArrivalUserCentric, u.rate, u.users
	b.set(path+".pattern", "--user-centric-rate")
	b.set(path+".rate", "--user-centric-rate")
	b.set(path+".users", "--num-users")
	if *f.set["concurrency"] {
		a.MaxConcurrency = f.concurrency
		b.set(path+".max_concurrency", "--concurrency")
	}
	return nil
}
