package policy

import "github.com/twmb/franz-go/pkg/kmsg"

// This file builds the answers of cluster-level APIs whose responses carry
// errors per entry rather than (or as well as) at the top level: each entry
// of the request is answered with the denial.

func denyCreateACLs(r *kmsg.CreateACLsRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	for range r.Creations {
		x := kmsg.NewCreateACLsResponseResult()
		x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
		resp.Results = append(resp.Results, x)
	}
	return resp
}

func denyDeleteACLs(r *kmsg.DeleteACLsRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	for range r.Filters {
		x := kmsg.NewDeleteACLsResponseResult()
		x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
		resp.Results = append(resp.Results, x)
	}
	return resp
}

func denyAlterReplicaLogDirs(r *kmsg.AlterReplicaLogDirsRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	for _, dir := range r.Dirs {
		for _, t := range dir.Topics {
			st := kmsg.NewAlterReplicaLogDirsResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p, d.code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
	}
	return resp
}

// denyDescribeLogDirs answers with the top-level error from v3 on; earlier
// versions have none, and get no directories, as Kafka answers them.
func denyDescribeLogDirs(r *kmsg.DescribeLogDirsRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	resp.ErrorCode = d.code
	return resp
}

func denyElectLeaders(r *kmsg.ElectLeadersRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	resp.ErrorCode = d.code
	for _, t := range r.Topics {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = t.Topic
		for _, p := range t.Partitions {
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition, sp.ErrorCode, sp.ErrorMessage = p, d.code, d.msgPtr()
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func denyAlterClientQuotas(r *kmsg.AlterClientQuotasRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, e := range r.Entries {
		x := kmsg.NewAlterClientQuotasResponseEntry()
		x.ErrorCode, x.ErrorMessage = d.code, d.msgPtr()
		for _, en := range e.Entity {
			xe := kmsg.NewAlterClientQuotasResponseEntryEntity()
			xe.Type, xe.Name = en.Type, en.Name
			x.Entity = append(x.Entity, xe)
		}
		resp.Entries = append(resp.Entries, x)
	}
	return resp
}

func denyAlterUserSCRAMCredentials(r *kmsg.AlterUserSCRAMCredentialsRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	seen := map[string]bool{}
	add := func(user string) {
		if seen[user] {
			return
		}
		seen[user] = true
		x := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		x.User, x.ErrorCode, x.ErrorMessage = user, d.code, d.msgPtr()
		resp.Results = append(resp.Results, x)
	}
	for _, del := range r.Deletions {
		add(del.Name)
	}
	for _, up := range r.Upsertions {
		add(up.Name)
	}
	return resp
}
