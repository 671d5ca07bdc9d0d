package policy

import "github.com/twmb/franz-go/pkg/kmsg"

// This file builds the answers of cluster-level APIs whose responses carry
// errors per entry rather than (or as well as) at the top level: each entry
// of the request is answered with the denial.

func denyCreateACLs(r *kmsg.CreateACLsRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = errorEntries[kmsg.CreateACLsResponseResult](len(r.Creations), d)
	return resp
}

func denyDeleteACLs(r *kmsg.DeleteACLsRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = errorEntries[kmsg.DeleteACLsResponseResult](len(r.Filters), d)
	return resp
}

func denyAlterReplicaLogDirs(r *kmsg.AlterReplicaLogDirsRequest, d *denial) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.AlterReplicaLogDirsResponse)
	for _, dir := range r.Dirs {
		resp.Topics = append(resp.Topics, topicsAnswering[kmsg.AlterReplicaLogDirsRequestDirTopic, kmsg.AlterReplicaLogDirsResponseTopic](dir.Topics, d)...)
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
	resp.Topics = topicsAnswering[kmsg.ElectLeadersRequestTopic, kmsg.ElectLeadersResponseTopic](r.Topics, d)
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
