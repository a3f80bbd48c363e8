#include "gateway/admin/key_ring.hpp"

#include "gateway/base64url.hpp"

#include "gateway/config/config.hpp"
#include "gateway/ids.hpp"

#include <openssl/rand.h>

#include <mutex>
#include <stdexcept>

namespace gateway::admin {

namespace {

std::string random_bytes(std::size_t n) {
    std::string bytes(n, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n)) != 1)
        throw std::runtime_error("the system random generator failed");
    return bytes;
}

}  // namespace

std::string new_secret() {
    // 256 random bits -> 43 characters.
    return "sk-cg-" + base64url_encode(random_bytes(32));
}

std::string new_key_id() {
    return random_id("key_", 8);
}

namespace {
std::atomic<std::uint64_t> rings_made{0};
}

key_ring::key_ring(const std::vector<virtual_key>& declared) : instance_(++rings_made) {
    for (auto key : declared) {
        key.declared = true;
        put(std::move(key));
    }
}

std::shared_ptr<const virtual_key> key_ring::by_secret(std::string_view secret) const {
    if (secret.empty()) return nullptr;
    struct seen {
        std::uint64_t ring = 0;
        std::uint64_t generation = 0;
        std::map<std::string, std::shared_ptr<const virtual_key>, std::less<>> keys;
    };
    thread_local seen cache;
    auto generation = generation_.load(std::memory_order_acquire);
    if (cache.ring != instance_ || cache.generation != generation || cache.keys.size() >= 256) {
        cache.ring = instance_;
        cache.generation = generation;
        cache.keys.clear();
    }
    if (auto hit = cache.keys.find(secret); hit != cache.keys.end()) return hit->second;
    auto digest = config::key_digest(secret);
    std::shared_ptr<const virtual_key> found;
    {
        std::shared_lock lock(mutex_);
        if (auto it = by_digest_.find(digest); it != by_digest_.end()) found = it->second;
    }
    // Unknown secrets are not remembered: a client guessing cannot fill the cache.
    if (found) cache.keys.emplace(std::string(secret), found);
    return found;
}

std::shared_ptr<const virtual_key> key_ring::by_id(std::string_view id) const {
    std::shared_lock lock(mutex_);
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const virtual_key>> key_ring::all() const {
    std::shared_lock lock(mutex_);
    std::vector<std::shared_ptr<const virtual_key>> out;
    for (const auto& [id, key] : by_id_) out.push_back(key);
    return out;
}

bool key_ring::put(virtual_key key) {
    auto shared = std::make_shared<const virtual_key>(std::move(key));
    std::unique_lock lock(mutex_);
    return put_locked(std::move(shared));
}

key_ring::named_put key_ring::put_named(virtual_key key) {
    auto shared = std::make_shared<const virtual_key>(std::move(key));
    std::unique_lock lock(mutex_);
    if (removed_.count(shared->id)) return named_put::refused;
    for (const auto& [id, other] : by_id_)
        if (other->name == shared->name && id != shared->id) return named_put::name_taken;
    return put_locked(std::move(shared)) ? named_put::done : named_put::refused;
}

bool key_ring::put_locked(std::shared_ptr<const virtual_key> shared) {
    if (removed_.count(shared->id)) return false;
    if (auto it = by_digest_.find(shared->digest);
        it != by_digest_.end() && it->second->id != shared->id)
        return false;
    if (auto old = by_id_.find(shared->id); old != by_id_.end())
        by_digest_.erase(old->second->digest);
    by_digest_[shared->digest] = shared;
    by_id_[shared->id] = shared;
    enforced_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return true;
}

std::vector<std::string> key_ring::adopt(const std::vector<store::key_record>& records) {
    std::vector<std::string> clashes;
    for (const auto& record : records) {
        if (record.revoked_at) {
            remove(record.key.id);
            note_revoked();
        } else if (!put(record.key) && !removed(record.key.id)) {
            clashes.push_back(record.key.name);
        }
    }
    return clashes;
}

std::vector<std::string> key_ring::declare(const std::vector<virtual_key>& declared) {
    std::set<std::string, std::less<>> named;
    for (const auto& key : declared) named.insert(key.id);
    std::vector<std::string> refused;
    std::unique_lock lock(mutex_);
    for (auto it = by_id_.begin(); it != by_id_.end();) {
        if (it->second->declared && !named.count(it->first)) {
            by_digest_.erase(it->second->digest);
            it = by_id_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto key : declared) {
        key.declared = true;
        auto name = key.name;
        if (!put_locked(std::make_shared<const virtual_key>(std::move(key))))
            refused.push_back(std::move(name));
    }
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return refused;
}

bool key_ring::removed(std::string_view id) const {
    std::shared_lock lock(mutex_);
    return removed_.count(std::string(id)) > 0;
}

bool key_ring::remove(std::string_view id) {
    std::unique_lock lock(mutex_);
    removed_.emplace(id);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return false;
    by_digest_.erase(it->second->digest);
    by_id_.erase(it);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    return true;
}

}  // namespace gateway::admin
