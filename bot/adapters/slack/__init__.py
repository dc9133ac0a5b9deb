"""The Slack platform: slack-bolt app over Socket Mode or HTTP, Block Kit rendering."""
