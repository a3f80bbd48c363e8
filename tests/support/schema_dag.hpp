#pragma once

#include <boost/json/object.hpp>

#include <string>

namespace gateway::testing {

// `$defs` d0 … d7 of which each object's 8 properties refer to the next level (d7's are
// strings): about 1.3 KB that a `$ref` to d{top} inlines as 8^(8 - top) leaves. The schema shape
// of the review's amplification finding (issue 51), for the tests of the expansion bound.
inline boost::json::object schema_dag_defs() {
    boost::json::object defs;
    for (int level = 0; level < 8; ++level) {
        boost::json::object props;
        for (int k = 0; k < 8; ++k)
            props["p" + std::to_string(k)] =
                level == 7 ? boost::json::value{{"type", "string"}}
                           : boost::json::value{{"$ref", "#/$defs/d" + std::to_string(level + 1)}};
        defs["d" + std::to_string(level)] =
            boost::json::object{{"type", "object"}, {"properties", std::move(props)}};
    }
    return defs;
}

}  // namespace gateway::testing
