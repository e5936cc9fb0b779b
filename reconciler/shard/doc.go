// Package shard splits the fleet's clusters among the replicas of
// `regatta run --replicas-mode shard`.
//
// # Membership
//
// Each replica holds a membership Lease (coordination.k8s.io/v1) in the
// management cluster and, every round (lease duration / 5, at most 2 s),
// renews it and then lists the group's Leases. Another member is live
// until one lease duration after the local time its Lease was first seen
// at its current resourceVersion: clocks are never compared. A member
// counts as fresh for half a lease duration from the start of its last
// round whose renewal and listing both succeeded, and works only while
// fresh and once it has been a member for a lease duration (again after a
// conflict on its Lease or a gap of a lease duration in its renewals: a
// second process with the same identity shows by conflicting meanwhile).
//
// # Assignment
//
// Assign gives each cluster to one live member, balanced (every member
// owns floor(n/N) or ceil(n/N) of n clusters), and sticky: a cluster
// stays with the member that holds it (claims it, below) while that
// member is within its quota. A member that joins takes only its quota
// (at most ceil(n/(N+1)), from members above their new quota); one that
// leaves moves only its own clusters. Clusters nobody holds go, in name
// order, to the member of highest rendezvous weight hash(member, cluster)
// that has room (rendezvous hashing with bounded loads). Without the
// holders, bounded loads alone move more than a share: on 2,000 random
// fleets of 9 clusters, a third replica coming back moved 4 clusters in
// 40% of them and 5 in 3%, against 3 always with the holders
// (TestAssignRestartOfOneOfThree).
//
// # Claims, the fence
//
// With bounded loads a cluster's owner depends on every member's view
// (the members, the clusters of the revision each one has, the holders),
// so two live members can transiently both compute that they own one
// cluster, e.g. while they are on different revisions of the repository
// or one has seen a member join and the other not yet. Ownership is
// therefore not computed but claimed: each member advertises, in its
// Lease's ClaimsAnnotation, the clusters assigned to it ("owns") and those
// it lost less than drainFor ago ("draining"). Member.Owns(k) is true
// only while
//
//  1. the member is fresh and past its joining wait,
//  2. k is assigned to it by its last round,
//  3. the renewal of its last round claimed k, and
//  4. the listing of its last round, made after that renewal, showed no
//     other live member claiming k (owned or draining), and every live
//     member's Lease carries claims (one without, e.g. of an older
//     release, is taken to claim everything).
//
// Two members A and C never both Own k. Suppose they did at time t. A's
// claim was written (renewal completed) before A's listing la started,
// and is in every later renewal of A while k stays in A's working set; C
// likewise with its renewal rc and listing lc. A list is a linearizable
// read, so la shows every write completed before it started: la did not
// show C's claim, so rc completed after la started, hence after A's claim
// was written. Then lc, which started after rc completed, would show A's
// claim, and C would not own k. The only way around is that one of them
// ignores the other's Lease as not live: A drops C only after seeing no
// new version of C's Lease for a full lease duration by A's clock, and C
// stops being fresh half a lease duration after the start of its last
// renewed round, which precedes that version's write; so C is not fresh
// then, and does not Own k either. A Lease whose holder was emptied is
// ignored at once, which is safe because a member releases its Lease
// only after the daemon stopped touching clusters.
//
// A member that loses k (by a change of the assignment, after a gap of a
// lease duration in its renewals, or on meeting a conflicting writer of
// its Lease) stops owning it at once, and the daemon's fence cancels the
// cluster's requests within its fencePoll (100 ms); the member keeps
// claiming k as draining for drainFor (1 s), so that no other member
// starts on k before those requests are over. A member merely stale (its
// renewals failing for less than a lease duration) stops working but
// keeps its claims: nobody can have expired it yet, so its clusters wait
// for it rather than move. None of this is needed for the argument above,
// which holds whatever a member claims; it keeps the clusters moving. A member that takes over a dead member's clusters
// waits until the dead Lease expired (one lease duration after the last
// renewal it saw), claims them at once in an extra renewal and owns them
// after the listing that follows: lease duration plus about two rounds
// after the last renewal. Members that disagree (different revisions)
// may leave a contested cluster unowned until they agree, never doubly
// owned.
//
// FleetKey, whose owner writes the fleet-wide status, is claimed the
// same way and goes to the member of highest rendezvous weight.
package shard
