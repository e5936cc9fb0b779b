package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LedgerKey is the key of the ledger ConfigMap's data.
const LedgerKey = "ledger.json"

// ConfigMapLedger keeps the ledger in a ConfigMap of the management
// cluster: every replica and every restart reads the same one, and an
// update is a compare-and-swap on its resourceVersion, so of two replicas
// deciding the same message only one records it (and sends it).
type ConfigMapLedger struct {
	Client    kubernetes.Interface
	Namespace string
	Name      string
}

// Update implements Ledger.
func (l *ConfigMapLedger) Update(ctx context.Context, change func(map[string]Entry) bool) error {
	for attempt := 0; attempt < 5; attempt++ {
		cms := l.Client.CoreV1().ConfigMaps(l.Namespace)
		cm, err := cms.Get(ctx, l.Name, metav1.GetOptions{})
		create := apierrors.IsNotFound(err)
		switch {
		case create:
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: l.Name, Namespace: l.Namespace,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "regatta"}}}
		case err != nil:
			return fmt.Errorf("read the notification ledger %s/%s: %w", l.Namespace, l.Name, err)
		}
		entries := map[string]Entry{}
		if raw := cm.Data[LedgerKey]; raw != "" {
			if err := json.Unmarshal([]byte(raw), &entries); err != nil {
				return fmt.Errorf("notification ledger %s/%s: %s is not a ledger: %w", l.Namespace, l.Name, LedgerKey, err)
			}
		}
		if !change(entries) {
			return nil
		}
		raw, err := json.Marshal(entries)
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[LedgerKey] = string(raw)
		if create {
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: "regatta"})
		} else {
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "regatta"})
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue // another writer came first: decide again on what it wrote
		}
		if err != nil {
			return fmt.Errorf("write the notification ledger %s/%s: %w", l.Namespace, l.Name, err)
		}
		return nil
	}
	return fmt.Errorf("notification ledger %s/%s: still changing under us after 5 attempts", l.Namespace, l.Name)
}

// KubeSecrets reads notification Secrets from one namespace.
type KubeSecrets struct {
	Client    kubernetes.Interface
	Namespace string
}

// Secret implements Secrets.
func (s KubeSecrets) Secret(ctx context.Context, name string) (map[string][]byte, error) {
	sec, err := s.Client.CoreV1().Secrets(s.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("notification Secret %s/%s: %w", s.Namespace, name, err)
	}
	return sec.Data, nil
}

// KubeEvents records core/v1 Events about regatta in one namespace of the
// management cluster (kubernetesEvent notifications).
type KubeEvents struct {
	Client    kubernetes.Interface
	Namespace string
	// Involved is the object the events are about (regatta's Deployment
	// or Pod); default a ConfigMap named regatta-notifications.
	Involved corev1.ObjectReference
	Now      func() time.Time
}

// Event implements EventSink.
func (k KubeEvents) Event(ctx context.Context, warning bool, reason, message string) error {
	now := metav1.NewTime(time.Now())
	if k.Now != nil {
		now = metav1.NewTime(k.Now())
	}
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	involved := k.Involved
	if involved.Name == "" {
		involved = corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: k.Namespace, Name: "regatta-notifications"}
	}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "regatta-", Namespace: k.Namespace},
		InvolvedObject: involved,
		Reason:         reason,
		Message:        message,
		Type:           typ,
		Source:         corev1.EventSource{Component: "regatta"},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	_, err := k.Client.CoreV1().Events(k.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("record a Kubernetes Event in %s: %w", k.Namespace, err)
	}
	return nil
}
