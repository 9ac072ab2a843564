package leaseschema_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leaseguard/leaseguard/analyzer/internal/leaseschema"
	"github.com/leaseguard/leaseguard/analyzer/internal/pgsql"
)

// infer parses each text and infers the schema of all their statements.
func infer(t *testing.T, texts ...string) *leaseschema.Schema {
	t.Helper()
	var stmts []leaseschema.Stmt
	for _, sql := range texts {
		p := pgsql.Parse(sql)
		if p.Err != nil {
			t.Fatalf("parse %q: %v", sql, p.Err)
		}
		for _, raw := range p.Stmts {
			stmts = append(stmts, leaseschema.Stmt{Raw: raw})
		}
	}
	return leaseschema.Infer(stmts)
}

// shape is a table's roles as the tests write them: "table(holder, epoch,
// expiry)" with "-" for none, or "" for no lease table; a heartbeat expiry
// is written "heartbeat:expiry".
func shape(s *leaseschema.Schema) string {
	var out []string
	for _, t := range s.Leases() {
		expiry := dash(t.Expiry)
		if t.Heartbeat {
			expiry = "heartbeat:" + expiry
		}
		out = append(out, fmt.Sprintf("%s(%s, %s, %s)", t.Name, dash(t.Holder), dash(t.Epoch), expiry))
	}
	return strings.Join(out, " ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func TestInfer(t *testing.T) {
	for _, tc := range []struct {
		name string
		sql  []string
		want string
	}{
		{
			name: "an activity stamp that no write of the holder sets is not the lease's expiry",
			sql: []string{
				`UPDATE topics SET last_inserted_at = now() WHERE topic = $1 AND (last_inserted_at IS NULL OR last_inserted_at < now() - interval '30 seconds')`,
				`UPDATE topics SET exclusive_consumer_expires_at = $3 WHERE topic = $1 AND exclusive_consumer_id = $2`,
				`UPDATE topics SET exclusive_consumer_id = $2, exclusive_consumer_expires_at = $3 WHERE topic = $1`,
			},
			want: "",
		},
		{
			name: "the reference package: takeover counts the epoch, renewal tests holder and epoch",
			sql: []string{
				`UPDATE worker_leases SET holder = $2, epoch = epoch + 1, expires_at = clock_timestamp() + $3::bigint * interval '1 millisecond'
				 WHERE name = $1 AND expires_at <= clock_timestamp()`,
				`INSERT INTO worker_leases (name, holder, epoch, expires_at) VALUES ($1, $2, 1, clock_timestamp() + $3::bigint * interval '1 millisecond') ON CONFLICT (name) DO NOTHING RETURNING epoch`,
				`UPDATE worker_leases SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond' WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()`,
			},
			want: "worker_leases(holder, epoch, expires_at)",
		},
		{
			name: "column names are anything: an upsert whose renewal arm tests the identity",
			sql: []string{
				`INSERT INTO vault_ha_locks AS t (ha_identity, ha_key, ha_value, valid_until) VALUES ($1, $2, $3, NOW() + $4 * INTERVAL '1 seconds')
				 ON CONFLICT (ha_key) DO UPDATE SET (ha_identity, ha_key, ha_value, valid_until) = ($1, $2, $3, NOW() + $4 * INTERVAL '1 seconds')
				 WHERE (t.valid_until < NOW() AND t.ha_key = $2) OR (t.ha_identity = $1 AND t.ha_key = $2)`,
				`DELETE FROM vault_ha_locks WHERE ha_identity = $1 AND ha_key = $2`,
			},
			want: "vault_ha_locks(ha_identity, -, valid_until)",
		},
		{
			name: "a visibility timeout: no holder, no epoch, a takeover of lapsed rows",
			sql: []string{
				`INSERT INTO goqite (queue, body, timeout) VALUES ($1, $2, $3) RETURNING id`,
				`UPDATE goqite SET timeout = $1, received = received + 1
				 WHERE id = (SELECT id FROM goqite WHERE queue = $2 AND $3 >= timeout AND received < $4 ORDER BY priority DESC, created LIMIT 1) RETURNING id, body`,
				`UPDATE goqite SET timeout = $1 WHERE queue = $2 AND id = $3`,
				`DELETE FROM goqite WHERE queue = $1 AND id = $2`,
			},
			want: "goqite(-, -, timeout)",
		},
		{
			name: "a lock with a locked_by column and a lease_expires_at",
			sql: []string{
				`UPDATE goose_lock SET locked = true, locked_at = now(), locked_by = $1, lease_expires_at = now() + $2::interval, updated_at = now()
				 WHERE id = $3 AND (locked = false OR lease_expires_at < now())`,
				`UPDATE goose_lock SET lease_expires_at = now() + $1::interval, updated_at = now() WHERE id = $2 AND locked_by = $3 AND locked = true`,
				`UPDATE goose_lock SET locked = false, locked_at = NULL, locked_by = NULL, lease_expires_at = NULL, updated_at = now() WHERE id = $1 AND locked_by = $2`,
			},
			want: "goose_lock(locked_by, -, lease_expires_at)",
		},
		{
			name: "a token compared and set from a parameter",
			sql: []string{
				`UPDATE shards SET range_id = $1, data = $2 WHERE shard_id = $3 AND range_id = $4`,
				`SELECT range_id FROM shards WHERE shard_id = $1 FOR UPDATE`,
				`INSERT INTO executions (shard_id, id) SELECT $1, $2 WHERE EXISTS (SELECT 1 FROM shards WHERE shard_id = $1 AND range_id = $3 FOR SHARE)`,
			},
			// No expiry: a token without a lease period is not a lease table.
			want: "",
		},
		{
			name: "a job queue whose run time is set and compared, with no takeover: not a lease",
			sql: []string{
				`INSERT INTO que_jobs (queue, priority, run_at, job_class, args) VALUES ($1, $2, $3, $4, $5)`,
				`SELECT queue, priority, run_at, job_id FROM que_jobs WHERE queue = $1 AND run_at <= now() ORDER BY priority, run_at, job_id LIMIT 1 FOR UPDATE SKIP LOCKED`,
				`UPDATE que_jobs SET error_count = $1, run_at = $2, last_error = $3 WHERE queue = $4 AND priority = $5 AND run_at = $6 AND job_id = $7`,
			},
			want: "",
		},
		{
			name: "a leader row taken by insert, renewed by the leader id",
			sql: []string{
				`INSERT INTO river_leader (leader_id, elected_at, expires_at) VALUES ($1, coalesce($2::timestamptz, now()), coalesce($2::timestamptz, now()) + make_interval(secs => $3)) ON CONFLICT (name) DO NOTHING`,
				`UPDATE river_leader SET expires_at = coalesce($2::timestamptz, now()) + make_interval(secs => $3) WHERE leader_id = $1 AND expires_at >= coalesce($2::timestamptz, now()) RETURNING *`,
				`DELETE FROM river_leader WHERE expires_at < coalesce($1::timestamptz, now())`,
			},
			want: "river_leader(leader_id, -, expires_at)",
		},
		{
			name: "two columns that could be the holder, neither set by a takeover: no holder, but the renewal shows a lease",
			sql: []string{
				`INSERT INTO leases (name, owner, expires) VALUES ($1, $2, now() + $3::interval)`,
				`UPDATE leases SET expires = now() + $1::interval WHERE name = $2 AND owner = $3 AND expires > now()`,
			},
			want: "leases(-, -, expires)",
		},
		{
			name: "a lease taken by a plain insert once the lapsed one is deleted, renewed with times from the process",
			sql: []string{
				`DELETE FROM leases WHERE exp < $1`,
				`INSERT INTO leases (name, exp, key) VALUES ($1, $2, $3)`,
				`UPDATE leases SET exp = $1 WHERE name = $2 AND key = $3 AND exp > $4`,
				`DELETE FROM leases WHERE name = $1 AND key = $2`,
			},
			want: "leases(-, -, exp)",
		},
		{
			name: "a time moved forward only where it is later than the one stored is no renewal",
			sql: []string{
				`UPDATE cursors SET position = $1 WHERE consumer = $2 AND position < $1`,
			},
			want: "",
		},
		{
			name: "DDL names the key, which leaves the holder",
			sql: []string{
				`CREATE TABLE leases (name text PRIMARY KEY, owner text NOT NULL, expires timestamptz NOT NULL)`,
				`INSERT INTO leases (name, owner, expires) VALUES ($1, $2, now() + $3::interval)`,
				`UPDATE leases SET expires = now() + $1::interval WHERE name = $2 AND owner = $3 AND expires > now()`,
			},
			want: "leases(owner, -, expires)",
		},
		{
			name: "a token from a sequence, tested by a fence",
			sql: []string{
				`INSERT INTO locks (name, owner, rvn, valid_until) VALUES ($1, $2, nextval('locks_rvn'), now() + $3::interval)
				 ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, rvn = nextval('locks_rvn'), valid_until = excluded.valid_until WHERE locks.valid_until < now()`,
				`UPDATE locks SET valid_until = now() + $1::interval WHERE name = $2 AND owner = $3 AND rvn = $4`,
			},
			want: "locks(owner, rvn, valid_until)",
		},
		{
			name: "a release that clears the expiry is not a time",
			sql: []string{
				`UPDATE leases SET holder_id = $1, expiry = now() + interval '10 seconds' WHERE name = $2 AND (expiry IS NULL OR expiry < now())`,
				`UPDATE leases SET expiry = NULL WHERE name = $1 AND holder_id = $2`,
			},
			want: "leases(holder_id, -, expiry)",
		},
		{
			name: "ids from a sequence are no epoch, and a heartbeat keyed by its id has no holder",
			sql: []string{
				`INSERT INTO "Dispatcher" (id, "lastHeartbeatAt") VALUES ($1, now())`,
				`UPDATE "Dispatcher" SET "lastHeartbeatAt" = $1 WHERE id = $2`,
				`SELECT id FROM "Dispatcher" WHERE "lastHeartbeatAt" > $1`,
				`INSERT INTO "Partition" (id, "lastHeartbeat") VALUES (gen_random_uuid(), now()) RETURNING id`,
				`UPDATE "Partition" SET "lastHeartbeat" = now() WHERE id = $1`,
				`SELECT id FROM "Partition" WHERE "lastHeartbeat" > now() - interval '1 minute'`,
			},
			want: "",
		},
		{
			name: "two times rows are chosen by: the one set beside the holder",
			sql: []string{
				`SELECT i.id FROM instances i WHERE i.state = $1 AND (i.locked_until IS NULL OR i.locked_until < $3) AND (i.sticky_until IS NULL OR i.sticky_until < $4 OR i.worker = $5) LIMIT 1 FOR UPDATE OF i SKIP LOCKED`,
				`UPDATE instances i SET locked_until = $1, worker = $2 WHERE id = $3`,
				`UPDATE instances SET locked_until = $1 WHERE instance_id = $2 AND execution_id = $3 AND worker = $4`,
				`UPDATE instances SET locked_until = NULL, sticky_until = $1, completed_at = $2, state = $3 WHERE instance_id = $4 AND execution_id = $5 AND worker = $6 AND locked_until IS NOT NULL`,
			},
			want: "instances(worker, -, locked_until)",
		},
		{
			name: "an id set by an insert and paged through by order is no expiry",
			sql: []string{
				`INSERT INTO entity_instances (id, entity_type, name, project_id) VALUES ($1, $2, $3, $4)`,
				`SELECT id, name FROM entity_instances WHERE project_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
				`UPDATE entity_instances SET name = $1 WHERE id = $2 AND project_id = $3`,
			},
			want: "",
		},
		{
			name: "a heartbeat that only moves its time forward takes nothing over",
			sql: []string{
				`UPDATE provisioner_daemons SET last_seen_at = $1 WHERE id = $2 AND last_seen_at <= $1`,
				`DELETE FROM provisioner_daemons WHERE last_seen_at < (NOW() - INTERVAL '7 days')`,
			},
			want: "",
		},
		{
			name: "a parameter cast to another type is no time: a poll that assigns a schedule is no acquisition",
			sql: []string{
				`UPDATE scheduled SET ticker_id = $1::uuid WHERE id IN (SELECT id FROM scheduled WHERE trigger_at <= NOW() + INTERVAL '5 seconds' AND (ticker_id IS NULL OR ticker_id = $1::uuid) FOR UPDATE SKIP LOCKED)`,
				`UPDATE scheduled SET trigger_at = $1::timestamp WHERE id = $2::uuid`,
				`UPDATE scheduled SET ticker_id = NULL WHERE ticker_id = $1::uuid`,
			},
			want: "",
		},
		{
			name: "rows idle for an interval taken with no holder: a pace, not a lease",
			sql: []string{
				`UPDATE alerts SET ticker_id = $1::uuid, last_alerted_at = NOW() WHERE id IN (SELECT id FROM alerts WHERE last_alerted_at IS NULL OR last_alerted_at <= NOW() - max_frequency::interval FOR UPDATE SKIP LOCKED)`,
				`UPDATE alerts SET last_alerted_at = $1::timestamp WHERE tenant_id = $2::uuid`,
			},
			want: "",
		},
		{
			name: "rows idle for an interval taken, and the time cleared on the row taken: a heartbeat lease released",
			sql: []string{
				`UPDATE storage_cleanups SET triggered_at = NOW() WHERE (virtual_storage, storage) IN (
					SELECT virtual_storage, storage FROM storage_cleanups
					WHERE COALESCE(last_run, TO_TIMESTAMP(0)) <= (NOW() - INTERVAL '1 MILLISECOND' * $1)
					AND COALESCE(triggered_at, TO_TIMESTAMP(0)) <= (NOW() - INTERVAL '1 MILLISECOND' * $2)
					ORDER BY last_run NULLS FIRST LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING virtual_storage, storage`,
				`UPDATE storage_cleanups SET triggered_at = NOW() WHERE virtual_storage = $1 AND storage = $2`,
				`UPDATE storage_cleanups SET last_run = NOW(), triggered_at = NULL WHERE virtual_storage = $1 AND storage = $2`,
			},
			want: "storage_cleanups(-, -, heartbeat:triggered_at)",
		},
		{
			name: "rows deleted once their heartbeat lapsed, and what they held freed: a reaped heartbeat lease",
			sql: []string{
				`INSERT INTO job_lock (job_id, lock_id, triggered_at) SELECT id, lock_id, NOW() AT TIME ZONE 'UTC' FROM jobs WHERE id = $1`,
				`UPDATE job_lock SET triggered_at = NOW() AT TIME ZONE 'UTC' WHERE (job_id, lock_id) IN (SELECT UNNEST($1::BIGINT[]), UNNEST($2::TEXT[]))`,
				`WITH stale AS (DELETE FROM job_lock WHERE triggered_at < NOW() AT TIME ZONE 'UTC' - INTERVAL '1 MILLISECOND' * $1 RETURNING job_id, lock_id)
				 UPDATE jobs SET state = 'failed' FROM stale WHERE stale.job_id = jobs.id`,
			},
			want: "job_lock(-, -, heartbeat:triggered_at)",
		},
		{
			name: "a time that the takeover sets to the clock itself beside the holder: when the lease began, a heartbeat",
			sql: []string{
				`UPDATE maintenance_leases SET holder_id = $1, acquired_at = now() WHERE topic = $2 AND acquired_at < $3`,
				`DELETE FROM maintenance_leases WHERE topic = $1 AND holder_id = $2`,
			},
			want: "maintenance_leases(holder_id, -, heartbeat:acquired_at)",
		},
		{
			name: "rows a worker claims under a lock, with a time the claim sets and a sweep compares: a job's lease",
			sql: []string{
				`UPDATE provisioner_jobs SET started_at = $1, updated_at = $1, worker_id = $2 WHERE id = (SELECT id FROM provisioner_jobs AS potential_job WHERE potential_job.started_at IS NULL AND potential_job.organization_id = $3 ORDER BY potential_job.created_at FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id`,
				`UPDATE provisioner_jobs SET updated_at = $2 WHERE id = $1`,
				`SELECT id FROM provisioner_jobs WHERE updated_at < $1 AND completed_at IS NULL`,
			},
			want: "provisioner_jobs(-, -, updated_at)",
		},
		{
			name: "the same claim without the lock: rows chosen, not claimed",
			sql: []string{
				`UPDATE provisioner_jobs SET started_at = $1, updated_at = $1, worker_id = $2 WHERE id = (SELECT id FROM provisioner_jobs WHERE started_at IS NULL ORDER BY created_at LIMIT 1)`,
				`UPDATE provisioner_jobs SET updated_at = $2 WHERE id = $1`,
				`SELECT id FROM provisioner_jobs WHERE updated_at < $1 AND completed_at IS NULL`,
			},
			want: "",
		},
		{
			name: "rows deleted once idle, and nothing else done: a cache's eviction, not a lease",
			sql: []string{
				`UPDATE cache SET touched_at = NOW() WHERE key = $1`,
				`WITH gone AS (DELETE FROM cache WHERE touched_at < NOW() - INTERVAL '1 day' RETURNING key) SELECT count(*) FROM gone`,
			},
			want: "",
		},
		{
			name: "a pace whose times are all cleared at once: a reset, not a release",
			sql: []string{
				`UPDATE alerts SET last_alerted_at = NOW() WHERE id IN (SELECT id FROM alerts WHERE last_alerted_at IS NULL OR last_alerted_at <= NOW() - max_frequency::interval FOR UPDATE SKIP LOCKED)`,
				`UPDATE alerts SET last_alerted_at = NULL WHERE tenant_id IS NOT NULL`,
			},
			want: "",
		},
		{
			name: "rows idle for an interval taken by a holder that renews them: a heartbeat lease",
			sql: []string{
				`UPDATE work SET claimed_by = $1, heartbeated_at = now() WHERE id = (SELECT id FROM work WHERE claimed_by IS NULL OR heartbeated_at < now() - interval '2 minutes' LIMIT 1 FOR UPDATE SKIP LOCKED)`,
				`UPDATE work SET heartbeated_at = now() WHERE id = $1 AND claimed_by = $2`,
				`DELETE FROM work WHERE id = $1 AND claimed_by = $2`,
			},
			want: "work(claimed_by, -, heartbeat:heartbeated_at)",
		},
		{
			name: "a liveness row that a takeover joins: the holder's session, whose lapse frees its leases",
			sql: []string{
				`WITH sessions AS MATERIALIZED (SELECT consumer_id, (expires_at < now())::boolean AS expired FROM consumer_sessions),
				 claimable AS (SELECT l.topic FROM maintenance_leases l LEFT JOIN sessions s ON s.consumer_id = l.holder_id WHERE l.topic = ANY($2::text[]) AND COALESCE(s.expired, l.acquired_at < $3::timestamptz) FOR UPDATE OF l SKIP LOCKED)
				 UPDATE maintenance_leases l SET holder_id = $1::uuid, acquired_at = now() FROM claimable c WHERE l.topic = c.topic RETURNING l.topic`,
				`UPDATE maintenance_leases SET holder_id = $2, acquired_at = NOW() WHERE topic = $1`,
				`DELETE FROM maintenance_leases WHERE topic = $1 AND holder_id = $2`,
				`INSERT INTO consumer_sessions (consumer_id, expires_at, maintains_default_expiration) VALUES ($1, $2, $3) ON CONFLICT (consumer_id) DO UPDATE SET expires_at = EXCLUDED.expires_at, maintains_default_expiration = EXCLUDED.maintains_default_expiration`,
				`DELETE FROM consumer_sessions WHERE expires_at < $1::timestamptz`,
			},
			want: "consumer_sessions(consumer_id, -, expires_at) maintenance_leases(holder_id, -, heartbeat:acquired_at)",
		},
		{
			name: "a table that a takeover joins by the holder without testing its lapse: no liveness row",
			sql: []string{
				`WITH claimable AS (SELECT l.topic FROM maintenance_leases l LEFT JOIN consumer_sessions s ON s.consumer_id = l.holder_id WHERE l.topic = ANY($2::text[]) AND s.maintains_default_expiration AND l.acquired_at < $3::timestamptz FOR UPDATE OF l SKIP LOCKED)
				 UPDATE maintenance_leases l SET holder_id = $1::uuid, acquired_at = now() FROM claimable c WHERE l.topic = c.topic RETURNING l.topic`,
				`DELETE FROM maintenance_leases WHERE topic = $1 AND holder_id = $2`,
				`INSERT INTO consumer_sessions (consumer_id, expires_at, maintains_default_expiration) VALUES ($1, $2, $3) ON CONFLICT (consumer_id) DO UPDATE SET expires_at = EXCLUDED.expires_at, maintains_default_expiration = EXCLUDED.maintains_default_expiration`,
				`DELETE FROM consumer_sessions WHERE expires_at < $1::timestamptz`,
			},
			want: "maintenance_leases(holder_id, -, heartbeat:acquired_at)",
		},
		{
			name: "a liveness row: the sweep of its holder's locks shows its holder and heartbeat",
			sql: []string{
				`UPDATE sync_controller SET time = $1 WHERE controller = $2`,
				`DELETE FROM sync_lock WHERE controller IN (SELECT controller FROM sync_controller WHERE time <= $1)`,
				`INSERT INTO sync_lock (name, controller) VALUES ($1, $2)`,
			},
			want: "sync_controller(controller, -, heartbeat:time)",
		},
		{
			name: "a sweep by a time that no write moves: no heartbeat, no lease",
			sql: []string{
				`INSERT INTO users (id, created_at) VALUES ($1, now())`,
				`DELETE FROM carts WHERE user_id IN (SELECT id FROM users WHERE created_at < $1)`,
			},
			want: "",
		},
		{
			name: "a sweep by a key that no write tests: no holder, no lease",
			sql: []string{
				`UPDATE sync_controller SET time = now() WHERE name = $1`,
				`DELETE FROM sync_lock WHERE controller IN (SELECT controller FROM sync_controller WHERE time <= now() - interval '1 minute')`,
			},
			want: "",
		},
		{
			name: "a lock taken with a random token once its heartbeat lapsed, renewed by the token",
			sql: []string{
				`INSERT INTO entity_execution_lock (entity, locked_by, last_lock_time, project_id, entity_instance_id) VALUES ($1::entities, gen_random_uuid(), NOW(), $2::UUID, $3::UUID)
				 ON CONFLICT (entity_instance_id) DO UPDATE SET locked_by = gen_random_uuid(), last_lock_time = NOW()
				 WHERE entity_execution_lock.last_lock_time < (NOW() - ($4::TEXT || ' seconds')::interval)`,
				`UPDATE entity_execution_lock SET last_lock_time = NOW() WHERE entity_instance_id = $1 AND locked_by = $2::UUID`,
				`DELETE FROM entity_execution_lock WHERE entity_instance_id = $1 AND locked_by = $2::UUID`,
			},
			want: "entity_execution_lock(-, locked_by, heartbeat:last_lock_time)",
		},
		{
			name: "an upsert that takes lapsed rows sets the expiry from EXCLUDED, the value its INSERT proposed",
			sql: []string{
				`INSERT INTO "Lease" ("expiresAt", "tenantId", "resourceId", "kind")
				 SELECT now() + COALESCE($1::interval, '30 seconds'::interval), $2::uuid, input."resourceId", $3::"LeaseKind" FROM (SELECT unnest($4::text[]) AS "resourceId") AS input
				 ON CONFLICT ("tenantId", "kind", "resourceId") DO UPDATE SET "expiresAt" = EXCLUDED."expiresAt"
				 WHERE "Lease"."expiresAt" < now() OR "Lease"."id" = ANY($5::bigint[])`,
				`DELETE FROM "Lease" WHERE "id" = ANY($1::bigint[])`,
			},
			want: "Lease(-, -, expiresAt)",
		},
		{
			name: "an upsert whose values come through common table expressions",
			sql: []string{
				`WITH inputs AS (SELECT $2::DATE AS key, $1::UUID AS lease_process_id, $3::TIMESTAMPTZ AS lease_expires_at),
				 to_insert AS (SELECT key, lease_process_id, lease_expires_at FROM inputs)
				 INSERT INTO cutover_job (key, lease_process_id, lease_expires_at)
				 SELECT ti.key, ti.lease_process_id, ti.lease_expires_at FROM to_insert ti
				 ON CONFLICT (key) DO UPDATE SET lease_process_id = EXCLUDED.lease_process_id, lease_expires_at = EXCLUDED.lease_expires_at
				 WHERE cutover_job.lease_expires_at < NOW() OR cutover_job.lease_process_id = $1::UUID`,
				`UPDATE cutover_job SET is_completed = TRUE WHERE key = $1::DATE`,
			},
			want: "cutover_job(lease_process_id, -, lease_expires_at)",
		},
		{
			name: "an equality in a RETURNING list is no write's condition: a session upsert is no lease",
			sql: []string{
				`INSERT INTO audit_sessions (id, agent_id, started_at, updated_at) VALUES ($1, $2, $3, $4)
				 ON CONFLICT (agent_id) DO UPDATE SET
				   id = CASE WHEN audit_sessions.updated_at > NOW() - ($5::bigint || ' ms')::interval THEN audit_sessions.id ELSE EXCLUDED.id END,
				   updated_at = EXCLUDED.updated_at
				 RETURNING id = $1 AS new_or_stale`,
			},
			want: "",
		},
		{
			name: "an upsert's values that its SET does not take over are the row's: a tenant is no holder",
			sql: []string{
				`WITH input AS (SELECT UNNEST($2::bigint[]) AS task_id, UNNEST($3::integer[]) AS retry_count)
				 INSERT INTO task_runtime (task_id, retry_count, worker_id, tenant_id, timeout_at)
				 SELECT input.task_id, input.retry_count, NULL, $1::uuid, CURRENT_TIMESTAMP + interval '5 minutes' FROM input
				 ON CONFLICT (task_id, retry_count) DO UPDATE SET timeout_at = EXCLUDED.timeout_at WHERE task_runtime.worker_id IS NULL`,
				`SELECT task_id FROM task_runtime WHERE tenant_id = $1::uuid AND timeout_at <= NOW()`,
				`DELETE FROM task_runtime WHERE tenant_id = $1::uuid AND task_id = ANY($2::bigint[])`,
			},
			want: "",
		},
		{
			name: "a time written in a zone is a time",
			sql: []string{
				`UPDATE locks SET holder = $1, expires = NOW() AT TIME ZONE 'UTC' + INTERVAL '1 MILLISECOND' * $2 WHERE name = $3 AND expires < NOW() AT TIME ZONE 'UTC'`,
				`UPDATE locks SET expires = NOW() AT TIME ZONE 'UTC' + INTERVAL '1 MILLISECOND' * $1 WHERE name = $2 AND holder = $3 AND expires > NOW() AT TIME ZONE 'UTC'`,
			},
			want: "locks(holder, -, expires)",
		},
		{
			name: "optimistic locking counts a version, with no expiry: no lease",
			sql: []string{
				`UPDATE accounts SET balance = $1, version = version + 1 WHERE id = $2 AND version = $3`,
			},
			want: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shape(infer(t, tc.sql...)); got != tc.want {
				t.Errorf("lease tables = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEvidence(t *testing.T) {
	s := infer(t,
		`UPDATE jobs SET locked_by = $1, locked_until = now() + $2::interval WHERE id = $3 AND (locked_until IS NULL OR locked_until < now())`,
		`UPDATE jobs SET locked_until = now() + $1::interval WHERE id = $2 AND locked_by = $3`,
	)
	tb := s.Tables["jobs"]
	if tb == nil || !tb.Lease {
		t.Fatalf("jobs is not a lease table: %+v", tb)
	}
	for _, r := range []leaseschema.Role{leaseschema.Holder, leaseschema.Expiry} {
		if len(tb.Why[r]) == 0 {
			t.Errorf("no evidence for the %s", r)
		}
		for _, ev := range tb.Why[r] {
			if ev.Why == "" || ev.Loc < 0 {
				t.Errorf("%s: evidence without a place or a reason: %+v", r, ev)
			}
		}
	}
	if tb.Takeover == nil || tb.Takeover.Stmt != 0 {
		t.Errorf("takeover = %+v, want the first statement", tb.Takeover)
	}
}

// TestRenewedBy checks the columns by which a renewal names its rows.
func TestRenewedBy(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want string
	}{
		{`UPDATE leases SET exp = $1 WHERE name = $2 AND key = $3 AND exp > $4`, "name key"},
		{`UPDATE messages SET timeout = now() + interval '1 minute' WHERE id = $1 AND timeout > now()`, "id"},
	} {
		s := infer(t, tc.sql)
		var got []string
		for _, l := range s.Leases() {
			got = append(got, l.RenewedBy...)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: renewed by %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// TestStates checks that a column the code sets from, or tests against,
// two Go constants (a status: PENDING, then COMPLETE) is neither holder
// nor epoch, and that one it sets from the same value each time may be.
func TestStates(t *testing.T) {
	stmts := func(consts ...map[int]string) []leaseschema.Stmt {
		texts := []string{
			`UPDATE batches SET status = $1, lease_expires = $2 WHERE batch_id = $3`,
			`UPDATE batches SET status = $1, lease_expires = NULL WHERE batch_id = $2 AND status = $3`,
			`SELECT batch_id FROM batches WHERE status = $1 AND lease_expires < $2`,
		}
		var out []leaseschema.Stmt
		for i, sql := range texts {
			p := pgsql.Parse(sql)
			if p.Err != nil {
				t.Fatalf("parse %q: %v", sql, p.Err)
			}
			out = append(out, leaseschema.Stmt{Raw: p.Stmts[0], Consts: consts[i]})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		consts []map[int]string
		want   string
	}{
		// Compared and set: read as a token the caller passes.
		{"values the caller gives", []map[int]string{nil, nil, nil}, "batches(-, status, lease_expires)"},
		{"one value each time", []map[int]string{{1: `"w"`}, {3: `"w"`}, {1: `"w"`}}, "batches(-, status, lease_expires)"},
		{"statuses the code names", []map[int]string{{1: "model.Pending"}, {1: "model.Complete", 3: "model.Pending"}, {1: "model.Pending"}}, ""},
		{"constant statuses", []map[int]string{{1: `"PENDING"`}, {1: `"COMPLETE"`, 3: `"PENDING"`}, {1: `"PENDING"`}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shape(leaseschema.Infer(stmts(tc.consts...))); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
