package sops

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// encValue matches sops' encrypted value format (same expression as sops).
var encValue = regexp.MustCompile(`^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]`)

var errNotEncValue = errors.New("value is not in sops' ENC[AES256_GCM,...] format")

// decryptValue opens one ENC[...] value with the data key; additional is
// the value's path ("a:b:"). The result has the Go type sops gives it.
func decryptValue(ciphertext string, key []byte, additional string) (any, error) {
	if ciphertext == "" {
		return "", nil
	}
	m := encValue.FindStringSubmatch(ciphertext)
	if m == nil {
		return nil, errNotEncValue
	}
	var parts [3][]byte
	for i := range parts {
		b, err := base64.StdEncoding.DecodeString(m[i+1])
		if err != nil {
			return nil, errNotEncValue
		}
		parts[i] = b
	}
	data, iv, tag := parts[0], parts[1], parts[2]
	plain, err := openGCM(key, iv, append(data, tag...), additional)
	if err != nil {
		return nil, err
	}
	return typed(plain, m[4])
}

func openGCM(key, iv, sealed []byte, additional string) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if len(iv) == 0 {
		return nil, errNotEncValue
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(iv))
	if err != nil {
		return nil, err
	}
	return gcm.Open(nil, iv, sealed, []byte(additional))
}

// encryptValue seals a plaintext value as sops does: a random 32-byte IV,
// the value's path as additional data, its type recorded. An empty string
// stays empty.
func encryptValue(v any, key []byte, additional string) (string, error) {
	plain, datatype, err := plainBytes(v)
	if err != nil || (datatype == "str" && len(plain) == 0) {
		return "", err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, nonceSize)
	if err != nil {
		return "", err
	}
	iv := make([]byte, nonceSize)
	if _, err := rand.Read(iv); err != nil {
		return "", err
	}
	out := gcm.Seal(nil, iv, plain, []byte(additional))
	data, tag := out[:len(out)-gcm.Overhead()], out[len(out)-gcm.Overhead():]
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]", b64(data), b64(iv), b64(tag), datatype), nil
}

// nonceSize is sops' IV length.
const nonceSize = 32

func plainBytes(v any) ([]byte, string, error) {
	b, err := macBytes(v)
	if err != nil {
		return nil, "", err
	}
	switch v.(type) {
	case string:
		return b, "str", nil
	case int:
		return b, "int", nil
	case float64:
		return b, "float", nil
	case bool:
		return b, "bool", nil
	case time.Time:
		return b, "time", nil
	default:
		return b, "bytes", nil
	}
}

// comment is a decrypted comment value: never part of the MAC.
type comment string

func typed(plain []byte, datatype string) (any, error) {
	s := string(plain)
	switch datatype {
	case "str":
		return s, nil
	case "int":
		return strconv.Atoi(s)
	case "float":
		return strconv.ParseFloat(s, 64)
	case "bytes":
		return plain, nil
	case "bool":
		return strconv.ParseBool(s)
	case "time":
		var t time.Time
		err := t.UnmarshalText(plain)
		return t, err
	case "comment":
		return comment(s), nil
	default:
		return nil, fmt.Errorf("unknown value type %q", datatype)
	}
}

// macBytes is sops' ToBytes: how a value enters the MAC.
func macBytes(v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return []byte(v), nil
	case int:
		return []byte(strconv.Itoa(v)), nil
	case float64:
		return []byte(strconv.FormatFloat(v, 'f', -1, 64)), nil
	case bool:
		if v {
			return []byte("True"), nil
		}
		return []byte("False"), nil
	case []byte:
		return v, nil
	case time.Time:
		return v.MarshalText()
	default:
		return nil, fmt.Errorf("unsupported value type %T", v)
	}
}
