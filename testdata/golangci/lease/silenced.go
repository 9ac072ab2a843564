package lease

import "net/http/httptest" //nolint:leaseguard // test helpers only

var _ = httptest.NewRecorder
