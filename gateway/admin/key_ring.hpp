#pragma once

#include "gateway/config/virtual_key.hpp"
#include "gateway/store/records.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::admin {

// The key, one struct from the configuration through the store to the ring
// (config/virtual_key.hpp).
using config::virtual_key;

// A new secret: "sk-cg-" and 43 characters of base64url (256 random bits).
std::string new_secret();
// A new key id: "key_" and 16 hex digits.
std::string new_key_id();

// Every live virtual key, declared and made through the admin API, found by the digest of its
// secret. Updates replace a key's entry whole, so a reader holds a consistent snapshot of it;
// a removed key refuses the next request that presents it. Each thread remembers the secrets it
// saw last (up to 256) until the ring changes, so a request usually costs no SHA-256 and no
// lock. Thread-safe.
class key_ring {
public:
    // `declared`: the configuration's keys, marked `declared` here.
    explicit key_ring(const std::vector<virtual_key>& declared);

    // Whether keys are required on /v1: once any key was declared or made (even if every one was
    // revoked since), a request without a live key is refused; before that, /v1 is open as
    // without the feature.
    bool enforced() const { return enforced_.load(std::memory_order_acquire); }
    // A key that existed and was revoked: nothing to look up, but /v1 stays closed.
    void note_revoked() { enforced_.store(true, std::memory_order_release); }
    std::shared_ptr<const virtual_key> by_secret(std::string_view secret) const;
    std::shared_ptr<const virtual_key> by_id(std::string_view id) const;
    std::vector<std::shared_ptr<const virtual_key>> all() const;

    // Adds or replaces (by id) a key; false when another key has the same digest, or when a key
    // with this id was removed: a change that raced the key's revocation (a PATCH whose store
    // write finished after the DELETE) never brings it back.
    bool put(virtual_key key);
    // put() for /admin/keys, which refuses also a name another live key has (declared or made):
    // the check and the change are one step, so two requests giving keys one name at once never
    // both get it. (What the store holds is adopted with put(), names as they are.)
    enum class named_put { done, refused, name_taken };
    named_put put_named(virtual_key key);
    // Removes a key for good: its id is remembered, and put() refuses it from then on.
    bool remove(std::string_view id);
    // Follows what the store holds (at start, and when another replica changed a key): each
    // live record is put, each revoked one removed; keys declared in the configuration stay.
    // The names of records whose secret another key has (not used) are returned.
    std::vector<std::string> adopt(const std::vector<store::key_record>& records);
    // The configuration's keys after a reload, in one step: a declared key it no longer names
    // goes (a later reload may declare it again), the others are put as declared now; keys made
    // through /admin/keys stay. The names of keys not taken (another key has their secret).
    std::vector<std::string> declare(const std::vector<virtual_key>& declared);

private:
    bool removed(std::string_view id) const;
    bool put_locked(std::shared_ptr<const virtual_key> key);  // mutex_ held

public:
private:
    std::atomic<bool> enforced_{false};
    // Bumped by every change, so the per-thread cache of by_secret() knows when to forget.
    std::atomic<std::uint64_t> generation_{0};
    const std::uint64_t instance_;  // unique per ring in the process, for the same purpose
    mutable std::shared_mutex mutex_;
    std::map<std::string, std::shared_ptr<const virtual_key>, std::less<>> by_digest_;
    std::map<std::string, std::shared_ptr<const virtual_key>, std::less<>> by_id_;
    std::set<std::string, std::less<>> removed_;  // ids of revoked keys
};

}  // namespace gateway::admin
