module github.com/leaseguard/leaseguard

go 1.26.0

require (
	github.com/aymanbagabas/go-udiff v0.4.2
	github.com/golangci/plugin-module-register v0.1.2
	github.com/jackc/pgx/v5 v5.13.0
	github.com/pganalyze/pg_query_go/v6 v6.2.5
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/tetratelabs/wazero v1.12.0
	github.com/wasilibs/go-pgquery v0.0.0-20260728010200-155ebad2880e
	github.com/wasilibs/wazero-helpers v0.0.0-20250123031827-cd30c44769bb
	golang.org/x/mod v0.42.0
	golang.org/x/tools v0.52.0
	google.golang.org/protobuf v1.36.11
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)
