package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/weir-stream/weir/cli"
)

// readFile returns the text of a file of the repository.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// flowLists returns the YAML flow sequences after key (args: [a, "b",
// ...]), which may span lines, as lists of strings.
func flowLists(yaml, key string) [][]string {
	var out [][]string
	for _, m := range regexp.MustCompile(`(?s)\b`+key+`: \[(.*?)\]`).FindAllStringSubmatch(yaml, -1) {
		var list []string
		for _, item := range strings.Split(m[1], ",") {
			list = append(list, strings.Trim(strings.TrimSpace(item), `"`))
		}
		out = append(out, list)
	}
	return out
}

// The Dockerfile and deploy/kubernetes agree, since no image is built in
// the test suite: the manifests run the image the build docs tag, whose
// entry point is the static weir binary on PATH under the name the
// probes call; every command and flag the manifests pass exists; and the
// container ports are the ones the processes listen on.
func TestTheImageFitsTheKubernetesManifests(t *testing.T) {
	docker := readFile(t, "../../Dockerfile")
	manifests := readFile(t, "../../deploy/kubernetes/weir.yaml")

	if !strings.Contains(docker, "CGO_ENABLED=0 go build") || !strings.Contains(docker, "-o /out/weir ./cmd/weir") {
		t.Error("the Dockerfile does not build ./cmd/weir statically (CGO_ENABLED=0) to /out/weir")
	}
	if !strings.Contains(docker, "COPY --from=build /out/weir /usr/local/bin/weir") {
		t.Error("the Dockerfile does not copy the binary to /usr/local/bin/weir")
	}
	if !strings.Contains(docker, `ENTRYPOINT ["/usr/local/bin/weir"]`) {
		t.Error("the image's entry point is not /usr/local/bin/weir: the manifests give only args")
	}
	tag := regexp.MustCompile(`docker build -t (\S+) \.`).FindStringSubmatch(docker)
	if tag == nil {
		t.Fatal("the Dockerfile's comment does not say how to build and tag the image")
	}
	images := regexp.MustCompile(`image: (\S+)`).FindAllStringSubmatch(manifests, -1)
	if len(images) == 0 {
		t.Fatal("no image in the manifests")
	}
	for _, m := range images {
		if m[1] != tag[1] {
			t.Errorf("the manifests run image %s, the Dockerfile builds %s", m[1], tag[1])
		}
	}
	for _, cmd := range flowLists(manifests, "command") {
		if cmd[0] != "weir" {
			t.Errorf("command %q: the image has the binary on PATH as weir only", cmd)
		}
	}

	// Every argument list (and every command run in the container) parses
	// as weir's command line.
	lists := flowLists(manifests, "args")
	for _, cmd := range flowLists(manifests, "command") {
		lists = append(lists, cmd[1:])
	}
	if len(lists) < 3 {
		t.Fatalf("found %d argument lists in the manifests, want the coordinator's, the worker's and the probe's", len(lists))
	}
	listens := map[string]bool{}
	for _, args := range lists {
		root := cli.Command(io.Discard, io.Discard)
		cmd, rest, err := root.Find(args)
		if err == nil && cmd == root {
			t.Errorf("%q: no such command", args)
			continue
		}
		if err == nil {
			err = cmd.ParseFlags(rest)
		}
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if l := cmd.Flags().Lookup("listen"); l != nil && l.Changed {
			_, port, _ := strings.Cut(l.Value.String(), ":")
			listens[port] = true
		}
	}
	for _, m := range regexp.MustCompile(`containerPort: (\d+)`).FindAllStringSubmatch(manifests, -1) {
		if !listens[m[1]] {
			t.Errorf("containerPort %s is no port a process listens on (--listen ports: %v)", m[1], listens)
		}
		if !strings.Contains(docker, m[1]) {
			t.Errorf("containerPort %s is not exposed by the Dockerfile", m[1])
		}
	}
}
