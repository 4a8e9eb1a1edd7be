package contract

import "strings"

// ValidLabel reports whether s is a lower-case RFC 1123 DNS label: 1 to 63
// letters, digits and hyphens, starting and ending with a letter or digit.
func ValidLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

// ValidDomain reports whether name (with or without its trailing dot) is a
// lower-case domain name of valid labels, at most 253 characters long.
func ValidDomain(name string) bool {
	name = strings.TrimSuffix(name, ".")
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if !ValidLabel(label) {
			return false
		}
	}
	return true
}
