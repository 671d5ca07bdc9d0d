package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Override sets one key on top of the file, for what differs per
// deployment rather than per configuration: a container's bind address,
// the host its clients reach it by, its ports. The value is validated as
// if the file had said it, and errors name Source.
type Override struct {
	// Key is the configuration key, one of OverridableKeys.
	Key string
	// Value is the key's value as it would be written in YAML.
	Value string
	// Source names where the value came from (an environment variable or
	// a flag), for error messages.
	Source string
}

// OverridableKeys lists the keys an Override may set.
func OverridableKeys() []string {
	return []string{"listeners.bind_host", "listeners.advertised_host",
		"listeners.bootstrap_port", "listeners.broker_port_base", "admin.listen"}
}

// applyOverrides sets each override's key, in order (a later one wins),
// before defaults are applied, so that a bind host given from outside
// is also the default advertised host, as it would be in the file. It
// returns which source set each key, for validation messages.
func (c *Config) applyOverrides(overrides []Override) (map[string]string, error) {
	sources := map[string]string{}
	for _, o := range overrides {
		if err := c.set(o.Key, o.Value); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Source, err)
		}
		sources[o.Key] = o.Source
	}
	return sources, nil
}

func (c *Config) set(key, value string) error {
	port := func(p *int) error {
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("%s: %q is not a number (want a TCP port, 0-65535)", key, value)
		}
		*p = n
		return nil
	}
	switch key {
	case "listeners.bind_host":
		c.Listeners.BindHost = value
	case "listeners.advertised_host":
		c.Listeners.AdvertisedHost = value
	case "listeners.bootstrap_port":
		return port(&c.Listeners.BootstrapPort)
	case "listeners.broker_port_base":
		return port(&c.Listeners.BrokerPortBase)
	case "admin.listen":
		c.Admin.Listen = value
	default:
		return fmt.Errorf("%q cannot be overridden (keys that can: %s)", key, strings.Join(OverridableKeys(), ", "))
	}
	return nil
}
