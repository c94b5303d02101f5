package lsm

import (
	"errors"
	"reflect"
	"testing"
)

func TestAManifestDecodesAsEncoded(t *testing.T) {
	m := &Manifest{KeyGroupStart: 3, KeyGroupEnd: 9,
		Files:   []File{{Name: "a1-000004.sst", Local: "000004.sst", Size: 1234, CRC32C: 0xdeadbeef}},
		Private: map[string][]byte{"MANIFEST-000001": []byte("m"), "OPTIONS-000003": nil}}
	got, err := DecodeManifest(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Private["OPTIONS-000003"] == nil {
		got.Private["OPTIONS-000003"] = nil // empty and nil decode alike
	}
	if got.KeyGroupStart != 3 || got.KeyGroupEnd != 9 || !reflect.DeepEqual(got.Files, m.Files) || len(got.Private) != 2 || string(got.Private["MANIFEST-000001"]) != "m" {
		t.Fatalf("decoded %+v, want %+v", got, m)
	}
}

func TestABadManifestIsCorrupt(t *testing.T) {
	good := (&Manifest{Files: []File{{Name: "x.sst", Local: "000001.sst"}}}).Encode()
	escaping := (&Manifest{Files: []File{{Name: "../../etc/passwd", Local: "000001.sst"}}}).Encode()
	for name, data := range map[string][]byte{
		"truncated":      good[:len(good)-2],
		"trailing bytes": append(append([]byte(nil), good...), 0),
		"not a manifest": []byte("WSVP\x01"),
		"escaping name":  escaping,
	} {
		if _, err := DecodeManifest(data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want an error wrapping ErrCorrupt", name, err)
		}
	}
}
