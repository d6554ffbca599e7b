package agenttest

import (
	"context"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/fleet/agent"
)

// Objects returns the UIDs of the objects and Pods of instance id ("":
// of every instance) in ns, listed by the agent's instance label, by
// "Kind/name".
func Objects(ctx context.Context, cs kubernetes.Interface, ns, id string) (map[string]types.UID, error) {
	lo := metav1.ListOptions{LabelSelector: agent.LabelInstance}
	if id != "" {
		lo.LabelSelector += "=" + id
	}
	out := map[string]types.UID{}
	add := func(kind string, m metav1.Object) { out[kind+"/"+m.GetName()] = m.GetUID() }
	s, err := cs.CoreV1().Secrets(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range s.Items {
		add("Secret", &s.Items[i])
	}
	c, err := cs.CoreV1().ConfigMaps(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range c.Items {
		add("ConfigMap", &c.Items[i])
	}
	d, err := cs.AppsV1().Deployments(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range d.Items {
		add("Deployment", &d.Items[i])
	}
	v, err := cs.CoreV1().Services(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range v.Items {
		add("Service", &v.Items[i])
	}
	p, err := cs.CoreV1().Pods(ns).List(ctx, lo)
	if err != nil {
		return nil, err
	}
	for i := range p.Items {
		add("Pod", &p.Items[i])
	}
	return out, nil
}

// Pods returns the Pods of instance id in ns that are not being deleted:
// name → Ready.
func Pods(ctx context.Context, cs kubernetes.Interface, ns, id string) (map[string]bool, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: agent.LabelInstance + "=" + id})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		out[p.Name] = ready
	}
	return out, nil
}

// HeaderInstanceID is the header in which the per-instance service
// (fleet-manager instance) names its instance in every answer.
const HeaderInstanceID = "X-Fleet-Instance-Id"

// Answers reports whether instance id's per-instance service answers GET
// /health/<id> at host ("ip:port") with 200 and names itself: another
// instance's service answers 404, so a stale address does not pass.
func Answers(ctx context.Context, host, id string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/health/"+id, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK && resp.Header.Get(HeaderInstanceID) == id
}
