package leasepkg_test

import (
	"testing"

	"github.com/leaseguard/leaseguard/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
