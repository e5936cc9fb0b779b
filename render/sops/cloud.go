package sops

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// errNoVaultToken: sops' Vault client would send its request without a
// token and report only Vault's answer (or a connection error).
var errNoVaultToken = errors.New("no Vault token (VAULT_TOKEN or ~/.vault-token)")

// hasVaultToken reports whether the Vault client sops uses finds a token.
func hasVaultToken() bool {
	if os.Getenv("VAULT_TOKEN") != "" {
		return true
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return false
	}
	fi, err := os.Stat(filepath.Join(home, ".vault-token"))
	return err == nil && fi.Size() > 0
}

// missingCredentials are, per cloud key type, phrases of its SDK's error
// when no credentials were found, and what to tell the operator.
var missingCredentials = map[string]struct {
	phrases []string
	hint    string
}{
	KeyTypeAWSKMS: {
		[]string{"failed to retrieve credentials", "no EC2 IMDS role found", "failed to refresh cached credentials", "NoCredentialProviders", "get credentials"},
		"no AWS credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_ROLE_ARN with AWS_WEB_IDENTITY_TOKEN_FILE, EKS Pod Identity or an instance role)",
	},
	KeyTypeGCPKMS: {
		[]string{"could not find default credentials", "google: could not find"},
		"no GCP credentials (GOOGLE_APPLICATION_CREDENTIALS, GOOGLE_CREDENTIALS or GKE workload identity)",
	},
	KeyTypeAzureKV: {
		[]string{"DefaultAzureCredential", "EnvironmentCredential", "ManagedIdentityCredential", "WorkloadIdentityCredential"},
		"no Azure credentials (AZURE_TENANT_ID/AZURE_CLIENT_ID with AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH, AZURE_FEDERATED_TOKEN_FILE for workload identity, or a managed identity)",
	},
	KeyTypeVault: {
		[]string{"cannot get Vault token", "missing client token", "permission denied"},
		"no Vault token that may use this key (VAULT_TOKEN or ~/.vault-token)",
	},
	KeyTypeHCKMS: {
		[]string{"credential", "AK/SK"},
		"no Huawei Cloud credentials (HUAWEICLOUD_SDK_AK/HUAWEICLOUD_SDK_SK)",
	},
}

// cloudError prefixes an SDK error with what is missing when it says that
// credentials were not found. SDK errors hold no plaintext: the data key
// is never in a request that failed.
func cloudError(keyType string, err error) error {
	if err == nil {
		return nil
	}
	m, ok := missingCredentials[keyType]
	if !ok {
		return err
	}
	for _, p := range m.phrases {
		if strings.Contains(err.Error(), p) {
			return fmt.Errorf("%s: %w", m.hint, err)
		}
	}
	return err
}
