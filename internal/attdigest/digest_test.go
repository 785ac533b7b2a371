package attdigest

import "testing"

func TestValid(t *testing.T) {
	for d, want := range map[string]bool{
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855":  true,
		"sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855":  false,
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85":   false,
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8555": false,
		"sha256:../../../../etc/passwd0000000000000000000000000000000000000000000": false,
		"md5:d41d8cd98f00b204e9800998ecf8427e":                                     false,
		"":                                                                         false,
	} {
		if got := Valid(d); got != want {
			t.Errorf("Valid(%q) = %v, want %v", d, got, want)
		}
	}
}

func TestOf(t *testing.T) {
	for data, want := range map[string]string{
		"":    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	} {
		got := Of([]byte(data))
		if got != want {
			t.Errorf("Of(%q) = %s, want %s", data, got, want)
		}
		if !Valid(got) {
			t.Errorf("Of(%q) = %s is not a valid digest", data, got)
		}
	}
}
