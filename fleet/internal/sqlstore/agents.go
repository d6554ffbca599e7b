package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fleetkit/fleetkit/fleet"
)

var _ fleet.AgentReports = (*Store)(nil)

// PutInstanceReports implements fleet.AgentReports. The IDs kept are read
// first, outside the write: an instance's cluster never changes once set,
// so the only race is with a soft delete, and a report of an instance
// deleted meanwhile is harmless (nothing reads it).
func (s *Store) PutInstanceReports(ctx context.Context, kind, clusterID string, reports map[string]fleet.InstanceReport) error {
	kept := make(map[string]fleet.InstanceReport, len(reports))
	if len(reports) > 0 {
		rows, err := s.query(ctx, true, `SELECT id FROM instances WHERE kind = ? AND cluster_id = ? AND deleted_at IS NULL`, kind, clusterID)
		if err != nil {
			return fmt.Errorf("%s: put instance reports: %w", s.d.Name, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("%s: put instance reports: %w", s.d.Name, err)
			}
			if r, ok := reports[id]; ok {
				kept[id] = r
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("%s: put instance reports: %w", s.d.Name, err)
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, true, `INSERT INTO agent_reports (kind, cluster_id, instances, instances_at) VALUES (?, ?, ?, ?)
ON CONFLICT (kind, cluster_id) DO UPDATE SET instances = excluded.instances, instances_at = excluded.instances_at`, kind, clusterID, string(b), now())
	if err != nil {
		return fmt.Errorf("%s: put instance reports: %w", s.d.Name, err)
	}
	return nil
}

// PutHeartbeat implements fleet.AgentReports.
func (s *Store) PutHeartbeat(ctx context.Context, kind, clusterID string, h fleet.Heartbeat) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, true, `INSERT INTO agent_reports (kind, cluster_id, heartbeat, heartbeat_at) VALUES (?, ?, ?, ?)
ON CONFLICT (kind, cluster_id) DO UPDATE SET heartbeat = excluded.heartbeat, heartbeat_at = excluded.heartbeat_at`, kind, clusterID, string(b), now())
	if err != nil {
		return fmt.Errorf("%s: put heartbeat: %w", s.d.Name, err)
	}
	return nil
}

const agentCols = `cluster_id, instances, instances_at, heartbeat, heartbeat_at`

func scanAgentReport(r scanner) (string, fleet.AgentReport, error) {
	var (
		a             fleet.AgentReport
		id, insts, hb string
		instsAt, hbAt sql.NullTime
	)
	if err := r.Scan(&id, &insts, &instsAt, &hb, &hbAt); err != nil {
		return id, a, err
	}
	if insts != "" {
		if err := json.Unmarshal([]byte(insts), &a.Instances); err != nil {
			return id, a, fmt.Errorf("instance reports of %s: %w", id, err)
		}
	}
	if hb != "" {
		if err := json.Unmarshal([]byte(hb), &a.Heartbeat); err != nil {
			return id, a, fmt.Errorf("heartbeat of %s: %w", id, err)
		}
	}
	if instsAt.Valid {
		a.InstancesAt = instsAt.Time.UTC()
	}
	if hbAt.Valid {
		a.HeartbeatAt = hbAt.Time.UTC()
	}
	return id, a, nil
}

// AgentReport implements fleet.AgentReports.
func (s *Store) AgentReport(ctx context.Context, kind, clusterID string) (fleet.AgentReport, error) {
	_, a, err := scanAgentReport(s.queryRow(ctx, true, `SELECT `+agentCols+` FROM agent_reports WHERE kind = ? AND cluster_id = ?`, kind, clusterID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.AgentReport{}, nil
	}
	if err != nil {
		return a, fmt.Errorf("%s: agent report: %w", s.d.Name, err)
	}
	return a, nil
}

// AgentReportsOf implements fleet.AgentReports.
func (s *Store) AgentReportsOf(ctx context.Context, kind string) (map[string]fleet.AgentReport, error) {
	rows, err := s.query(ctx, true, `SELECT `+agentCols+` FROM agent_reports WHERE kind = ?`, kind)
	if err != nil {
		return nil, fmt.Errorf("%s: agent reports: %w", s.d.Name, err)
	}
	defer rows.Close()
	out := map[string]fleet.AgentReport{}
	for rows.Next() {
		id, a, err := scanAgentReport(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: agent reports: %w", s.d.Name, err)
		}
		out[id] = a
	}
	return out, rows.Err()
}
