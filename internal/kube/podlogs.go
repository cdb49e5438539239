package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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

// ContainerLogTail reads the last lines a container of pod logged (its
// previous instance's with previous), with the literal env values of the
// pod's spec masked.
func ContainerLogTail(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, container string, previous bool) ([]string, error) {
	lines, bytes := int64(maxLogLines), int64(maxLogFetch)
	raw, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: container, Previous: previous, TailLines: &lines, LimitBytes: &bytes,
	}).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return tail(maskEnv(string(raw), pod), maxLogLines, maxLogBytes), nil
}

// LogTail is how a Waiter reads the log of a container that failed.
type LogTail func(ctx context.Context, c ContainerRef) ([]string, error)

// NewLogTail reads logs with cs: the pod (for the env values to mask),
// then its container's last lines.
func NewLogTail(cs kubernetes.Interface) LogTail {
	return func(ctx context.Context, c ContainerRef) ([]string, error) {
		pod, err := cs.CoreV1().Pods(c.Namespace).Get(ctx, c.Pod, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		lines, err := ContainerLogTail(ctx, cs, pod, c.Container, c.Previous)
		if err != nil && c.Previous {
			// The crashed instance's log may be gone (rotated, or a
			// kubelet that keeps none): the running one's is next best.
			lines, err = ContainerLogTail(ctx, cs, pod, c.Container, false)
		}
		return lines, err
	}
}

// WithLogs completes a Failing verdict's message with the last log lines
// of the container that failed, or says why there are none.
func WithLogs(ctx context.Context, logs LogTail, h Health) Health {
	if logs == nil || h.Logs == nil {
		return h
	}
	c := *h.Logs
	lines, err := logs(ctx, c)
	switch {
	case apierrors.IsForbidden(err):
		h.Message += fmt.Sprintf("\n(no log of pod %s/%s container %s: these credentials may not get pods/log in %s; grant it to see the log here)", c.Namespace, c.Pod, c.Container, c.Namespace)
	case err != nil:
		h.Message += fmt.Sprintf("\n(no log of pod %s/%s container %s: %v)", c.Namespace, c.Pod, c.Container, err)
	case len(lines) == 0:
		h.Message += fmt.Sprintf("\npod %s/%s container %s logged nothing", c.Namespace, c.Pod, c.Container)
	default:
		h.Message += fmt.Sprintf("\nlast log lines of pod %s/%s container %s:\n  %s", c.Namespace, c.Pod, c.Container, strings.Join(lines, "\n  "))
	}
	return h
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
