package leasepkg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leaseguard/leaseguard/leasepkg"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*leasepkg.Config)
		want string // substring of the error; empty means valid
	}{
		{"defaults", nil, ""},
		{"empty name", func(c *leasepkg.Config) { c.Name = "" }, "name must not be empty"},
		{"empty holder", func(c *leasepkg.Config) { c.Holder = "" }, "holder must not be empty"},
		{"zero ttl", func(c *leasepkg.Config) { c.TTL = 0 }, "ttl must be at least 1ms"},
		{"fractional ttl", func(c *leasepkg.Config) { c.TTL = 1500 * time.Microsecond }, "whole number of milliseconds"},
		{"zero renew interval", func(c *leasepkg.Config) { c.RenewInterval = 0 }, "renew interval must be positive"},
		{"one renewal per ttl", func(c *leasepkg.Config) { c.RenewInterval = 10 * time.Second }, "less than half the ttl"},
		{"renewal at half the ttl", func(c *leasepkg.Config) { c.RenewInterval = 7500 * time.Millisecond }, "less than half the ttl"},
		{"lock timeout past the ttl", func(c *leasepkg.Config) { c.LockTimeout = time.Minute }, "lock timeout 1m0s must be less than the ttl"},
		{"idle timeout at the ttl", func(c *leasepkg.Config) { c.IdleInTxTimeout = 15 * time.Second }, "idle-in-transaction timeout 15s must be less than the ttl"},
		{"negative idle timeout", func(c *leasepkg.Config) { c.IdleInTxTimeout = -time.Second }, "must not be negative"},
		{"fractional idle timeout", func(c *leasepkg.Config) { c.IdleInTxTimeout = 1500 * time.Microsecond }, "idle-in-transaction timeout must be a whole number of milliseconds"},
		{"idle timeout under the ttl", func(c *leasepkg.Config) { c.IdleInTxTimeout = 14 * time.Second }, ""},
		{"negative stop margin", func(c *leasepkg.Config) { c.StopMargin = -time.Second }, "stop margin must not be negative"},
		{"stop margin past two renewals", func(c *leasepkg.Config) { c.StopMargin = 5 * time.Second }, "stop margin 5s must be less than the ttl 15s less two renew intervals 5s"},
		{"stop margin within two renewals", func(c *leasepkg.Config) { c.StopMargin = 4 * time.Second }, ""},
		{"default stop margin, renewals near half the ttl", func(c *leasepkg.Config) { c.RenewInterval = 7400 * time.Millisecond }, ""},
		{"unknown policy", func(c *leasepkg.Config) { c.Policy = 7 }, "unknown epoch policy EpochPolicy(7)"},
		{"bad dsn", func(c *leasepkg.Config) { c.DSN = "postgres://u:secret@host:notaport/db" }, "bad dsn"},
		{"good dsn", func(c *leasepkg.Config) { c.DSN = "postgres://u@localhost:5432/db" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := leasepkg.DefaultConfig("orders")
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			err := cfg.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate: %v, want an error containing %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "secret"):
				t.Fatalf("Validate leaks the password: %v", err)
			}
		})
	}

	t.Run("reports every problem", func(t *testing.T) {
		err := leasepkg.Config{}.Validate()
		for _, want := range []string{"name", "holder", "ttl", "renew interval", "lock timeout"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Validate of the zero Config: %v, want it to mention %q", err, want)
			}
		}
	})
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := leasepkg.DefaultConfig("orders")
	if c.TTL != 15*time.Second || c.RenewInterval != 5*time.Second || c.Policy != leasepkg.PerTerm {
		t.Fatalf("defaults: ttl %v, renew %v, policy %v; want 15s, 5s, per-term", c.TTL, c.RenewInterval, c.Policy)
	}
	parts := strings.Split(c.Holder, ":")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || len(parts[2]) != 12 {
		t.Fatalf("holder %q, want hostname:pid:random", c.Holder)
	}
	if other := leasepkg.DefaultConfig("orders").Holder; other == c.Holder {
		t.Fatalf("two holders in one process share the id %q", c.Holder)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(leasepkg.EnvDSN, "")
	if _, err := leasepkg.FromEnv("orders"); err == nil || !strings.Contains(err.Error(), leasepkg.EnvDSN+" is not set") {
		t.Fatalf("FromEnv without a DSN: %v", err)
	}
	t.Setenv(leasepkg.EnvDSN, "postgres://u@localhost/db")
	c, err := leasepkg.FromEnv("orders")
	if err != nil || c.DSN != "postgres://u@localhost/db" {
		t.Fatalf("FromEnv: %+v, %v", c, err)
	}
	if _, err := leasepkg.FromEnv(""); err == nil {
		t.Fatal("FromEnv accepted an empty name")
	}
}
