// lincheck: reads a history of etcd key-value calls (JSON on stdin) and checks it for linearizability with porcupine
// (the checker etcd's robustness tests use) against a model of etcd's key space: put, get and compare-and-swap on
// single keys. A call whose outcome is unknown (a timeout) may have taken effect at any moment after it began, or
// never, so it is given no return time and a nondeterministic step. Exit 0: linearizable; 1: not (a stale read, a
// lost or invented write); 3: the checker ran out of time (no verdict); 2: bad input.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Call is one client call as the soak records it.
type Call struct {
	Client int    `json:"client"`
	Kind   string `json:"kind"` // put | get | cas
	Key    string `json:"key"`
	// put and cas: the value written; cas: the value it must find (Expected, "" with ExpectAbsent false means
	// the empty string).
	Value    string `json:"value,omitempty"`
	Expected string `json:"expected,omitempty"`
	Call     int64  `json:"call"`
	// Return is absent for a call whose outcome is unknown.
	Return  *int64 `json:"return,omitempty"`
	Unknown bool   `json:"unknown,omitempty"`
	// get: whether the key existed and its value.
	Found bool   `json:"found,omitempty"`
	Got   string `json:"got,omitempty"`
	// cas: whether the comparison held.
	Succeeded bool `json:"succeeded,omitempty"`
}

type input struct {
	kind, key, value, expected string
}

type output struct {
	unknown, found, succeeded bool
	got                       string
}

// state is one key's value; absent is a value no client writes.
const absent = "\x00absent"

func step(state interface{}, in interface{}, out interface{}) []interface{} {
	s := state.(string)
	i := in.(input)
	o := out.(output)
	switch i.kind {
	case "put":
		if o.unknown {
			return []interface{}{s, i.value}
		}
		return []interface{}{i.value}
	case "get":
		if o.unknown {
			return []interface{}{s}
		}
		now := absent
		if o.found {
			now = o.got
		}
		if now == s {
			return []interface{}{s}
		}
		return nil
	case "cas":
		holds := s == i.expected
		if o.unknown {
			if holds {
				return []interface{}{s, i.value}
			}
			return []interface{}{s}
		}
		if o.succeeded && holds {
			return []interface{}{i.value}
		}
		if !o.succeeded && !holds {
			return []interface{}{s}
		}
		return nil
	}
	return nil
}

func describe(in interface{}, out interface{}) string {
	i := in.(input)
	o := out.(output)
	switch i.kind {
	case "put":
		if o.unknown {
			return fmt.Sprintf("put(%s, %s) -> unknown", i.key, i.value)
		}
		return fmt.Sprintf("put(%s, %s)", i.key, i.value)
	case "get":
		if !o.found {
			return fmt.Sprintf("get(%s) -> absent", i.key)
		}
		return fmt.Sprintf("get(%s) -> %s", i.key, o.got)
	default:
		res := fmt.Sprint(o.succeeded)
		if o.unknown {
			res = "unknown"
		}
		return fmt.Sprintf("cas(%s, %s -> %s) -> %s", i.key, i.expected, i.value, res)
	}
}

// KVModel is etcd's key space, partitioned by key (every call touches one key).
var KVModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		keys := []string{}
		for _, op := range history {
			k := op.Input.(input).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(keys)
		parts := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, byKey[k])
		}
		return parts
	},
	Init:              func() []interface{} { return []interface{}{absent} },
	Step:              step,
	Equal:             func(a, b interface{}) bool { return a.(string) == b.(string) },
	DescribeOperation: describe,
	DescribeState: func(s interface{}) string {
		if s.(string) == absent {
			return "(absent)"
		}
		return s.(string)
	},
}

type verdict struct {
	Result        string `json:"result"`
	Operations    int    `json:"operations"`
	Unknown       int    `json:"unknown"`
	Keys          int    `json:"keys"`
	Visualization string `json:"visualization,omitempty"`
	Error         string `json:"error,omitempty"`
}

func main() {
	timeout := flag.Duration("timeout", 5*time.Minute, "how long the checker may search (0: no limit)")
	visualize := flag.String("visualize", "", "write porcupine's HTML visualization here when the history is not linearizable")
	flag.Parse()
	os.Exit(run(*timeout, *visualize))
}

func run(timeout time.Duration, visualize string) int {
	var calls []Call
	if err := json.NewDecoder(os.Stdin).Decode(&calls); err != nil {
		return emit(verdict{Result: "BadInput", Error: err.Error()}, 2)
	}
	ops := make([]porcupine.Operation, 0, len(calls))
	unknown := 0
	keys := map[string]bool{}
	for n, c := range calls {
		if c.Kind != "put" && c.Kind != "get" && c.Kind != "cas" {
			return emit(verdict{Result: "BadInput", Error: fmt.Sprintf("call %d: unknown kind %q", n, c.Kind)}, 2)
		}
		ret := int64(math.MaxInt64)
		if c.Unknown || c.Return == nil {
			unknown++
		} else {
			ret = *c.Return
			if ret < c.Call {
				return emit(verdict{Result: "BadInput", Error: fmt.Sprintf("call %d returns before it is called", n)}, 2)
			}
		}
		keys[c.Key] = true
		ops = append(ops, porcupine.Operation{
			ClientId: c.Client,
			Input:    input{kind: c.Kind, key: c.Key, value: c.Value, expected: c.Expected},
			Call:     c.Call,
			Output:   output{unknown: c.Unknown || c.Return == nil, found: c.Found, succeeded: c.Succeeded, got: c.Got},
			Return:   ret,
		})
	}
	model := KVModel.ToModel()
	result, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	v := verdict{Result: string(result), Operations: len(ops), Unknown: unknown, Keys: len(keys)}
	switch result {
	case porcupine.Ok:
		return emit(v, 0)
	case porcupine.Illegal:
		if visualize != "" {
			if err := porcupine.VisualizePath(model, info, visualize); err == nil {
				v.Visualization = visualize
			}
		}
		return emit(v, 1)
	default:
		return emit(v, 3)
	}
}

func emit(v verdict, code int) int {
	_ = json.NewEncoder(os.Stdout).Encode(v)
	return code
}
