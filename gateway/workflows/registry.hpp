#pragma once

#include "gateway/workflows/workflow.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gateway::workflows {

// The loaded workflows, replaceable while the gateway serves (SIGHUP): readers take a snapshot
// that stays valid however often the set is reloaded. Thread-safe.
class registry {
public:
    using snapshot = std::shared_ptr<const std::vector<workflow>>;

    // `folder` may be missing only when `optional` (the default folder of a binary run elsewhere).
    registry(std::string folder, const tools::registry& tools, bool optional);

    // Loads the folder again. On an error the previous set stays in place and the error (file,
    // line, reason) is returned; "" on success.
    std::string reload();

    snapshot all() const;
    // The workflow `id` in `in`, or null.
    static const workflow* find(const snapshot& in, std::string_view id);

private:
    std::string folder_;
    const tools::registry& tools_;
    bool optional_;
    mutable std::mutex mutex_;
    snapshot current_ = std::make_shared<const std::vector<workflow>>();
};

}  // namespace gateway::workflows
