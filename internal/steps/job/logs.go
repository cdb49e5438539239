package job

import (
	"context"
	"sort"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// The part of a failed container's log a result carries.
const (
	maxLogLines = 20
	maxLogBytes = 2 << 10
	// maxLogFetch caps what is read for those lines: one huge line must
	// not be pulled whole into memory.
	maxLogFetch = 64 << 10
)

// minMaskedLen: env values shorter than this ("true", "info", "8080") are
// left in logs, where masking them would blank common words.
const minMaskedLen = 6

const mask = "xxxxx"

// logTail reads the last lines a container logged.
func (e *Executor) logTail(ctx context.Context, x exit) ([]string, error) {
	lines, bytes := int64(maxLogLines), int64(maxLogFetch)
	raw, err := e.cs.CoreV1().Pods(x.pod.Namespace).GetLogs(x.pod.Name, &corev1.PodLogOptions{
		Container: x.container, Previous: x.previous, TailLines: &lines, LimitBytes: &bytes,
	}).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return tail(maskEnv(string(raw), x.pod), maxLogLines, maxLogBytes), nil
}

// tail keeps the last maxLines lines of text, then drops leading lines
// until they fit in maxBytes; a last line longer than that keeps its end.
func tail(text string, maxLines, maxBytes int) []string {
	text = strings.ToValidUTF8(strings.TrimRight(text, "\r\n"), "?")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	size := len(lines) - 1 // the newlines between them
	for _, l := range lines {
		size += len(l)
	}
	for len(lines) > 1 && size > maxBytes {
		size -= len(lines[0]) + 1
		lines = lines[1:]
	}
	if last := lines[0]; len(last) > maxBytes {
		cut := len(last) - maxBytes + len("…")
		for cut < len(last) && !utf8.RuneStart(last[cut]) {
			cut++
		}
		lines[0] = "…" + last[cut:]
	}
	return lines
}

// maskEnv hides the literal env values of the pod's containers, which a
// program may print (a connection string, a token). Values from Secrets
// are not known here: the step never reads Secrets.
func maskEnv(text string, pod *corev1.Pod) string {
	var values []string
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, env := range c.Env {
				if len(env.Value) >= minMaskedLen {
					values = append(values, env.Value)
				}
			}
		}
	}
	// Longest first, so a value that contains another is masked whole.
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	for _, v := range values {
		text = strings.ReplaceAll(text, v, mask)
	}
	return text
}
