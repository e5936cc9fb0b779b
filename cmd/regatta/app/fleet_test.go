package app

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestFleetIdentity(t *testing.T) {
	https, err := fleetIdentity("", "https://bot:token@github.com/acme/fleet-infra.git")
	if err != nil {
		t.Fatal(err)
	}
	ssh, err := fleetIdentity("", "git@github.com:acme/fleet-infra")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := fleetIdentity("", "https://github.com/acme/team-fleet")
	if https.ID != ssh.ID || !https.Legacy || !strings.HasPrefix(https.ID, "fleet-infra-") {
		t.Errorf("derived identities %+v (HTTPS) and %+v (SSH): want one fleet-infra-<hash> that adopts unlabelled inventories", https, ssh)
	}
	if other.ID == https.ID || len(validation.IsDNS1123Label(other.ID)) > 0 {
		t.Errorf("other repository: %q", other.ID)
	}
	long, _ := fleetIdentity("", "/srv/"+strings.Repeat("Very_Long.Name", 10))
	if len(validation.IsDNS1123Label(long.ID)) > 0 {
		t.Errorf("derived identity %q is not a DNS label", long.ID)
	}
	explicit, err := fleetIdentity("platform", "https://github.com/acme/fleet-infra")
	if err != nil || explicit.ID != "platform" || explicit.Legacy {
		t.Errorf("explicit: %+v %v, want platform without adoption", explicit, err)
	}
	if _, err := fleetIdentity("Not_A_Label", "x"); err == nil {
		t.Error("an invalid --fleet was accepted")
	}
}
